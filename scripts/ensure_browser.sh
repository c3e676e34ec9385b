#!/usr/bin/env bash
# The last step of `make test` loads every page of both editions of the built site in headless
# Chromium, and the Chinese pages (and the Chinese figures `make book` draws) need a font with
# Chinese glyphs. Check for both before any work; install them where that is possible (root on
# Debian), otherwise stop at once with the command for this distribution. Node.js runs the
# independent cross-check of the canonical JSON (tests/test_jcs_check.py), which make test requires.
#
#   bash scripts/ensure_browser.sh          Chromium, the font and Node.js (make test)
#   bash scripts/ensure_browser.sh --font   the font only (make book, for the Chinese figures)
set -euo pipefail
OS_RELEASE=${OS_RELEASE:-/etc/os-release}  # which distribution this is (a test points it elsewhere)
FONT_ONLY=0
case "${1:-}" in
  --font) FONT_ONLY=1 ;;
  "") ;;
  *) echo "usage: ensure_browser.sh [--font]" >&2; exit 2 ;;
esac
PACKAGES="chromium fonts-dejavu-core fonts-wqy-zenhei nodejs"  # fonts-wqy-zenhei: the Chinese edition's CJK font
FONT_PACKAGES="fonts-dejavu-core fonts-wqy-zenhei"
have_browser() { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; }
# Any font fontconfig knows for Chinese will do (evalbook_pages.editions.cjk_font_path finds it the same way).
have_cjk_font() { command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list :lang=zh file 2>/dev/null)" ]; }
have_node() { command -v node >/dev/null 2>&1; }
ready() { if ((FONT_ONLY)); then have_cjk_font; else have_browser && have_cjk_font && have_node; fi; }
if ready; then
  exit 0
fi
if ((FONT_ONLY)); then PACKAGES=$FONT_PACKAGES; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1 && grep -qi '^ID=debian' "$OS_RELEASE" 2>/dev/null; then
  echo "Missing for the site, the Chinese figures or the JSON check: installing $PACKAGES" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PACKAGES >/dev/null
  ready && exit 0
  echo "error: apt-get ran but chromium or node is not on PATH, or fc-list finds no font for :lang=zh" >&2
  exit 1
fi
# The same three things under each distribution's own names (as of 2026; the package names may move).
distribution=$(. "$OS_RELEASE" 2>/dev/null && echo "${ID:-} ${ID_LIKE:-}" || true)
case " $distribution " in
  *" debian "* | *" ubuntu "*)
    command="sudo apt-get update && sudo apt-get install -y $PACKAGES"
    [[ " $distribution " == *" ubuntu "* ]] && ((!FONT_ONLY)) && command="$command   (Ubuntu's chromium is a snap: 'chromium' must be on PATH)" ;;
  *" fedora "* | *" rhel "* | *" centos "*)
    command="sudo dnf install -y google-noto-sans-cjk-fonts dejavu-sans-fonts"
    ((FONT_ONLY)) || command="$command chromium nodejs" ;;
  *" arch "*)
    command="sudo pacman -S noto-fonts-cjk ttf-dejavu"
    ((FONT_ONLY)) || command="$command chromium nodejs" ;;
  *" opensuse"* | *" suse "*)
    command="sudo zypper install noto-sans-sc-fonts dejavu-fonts"
    ((FONT_ONLY)) || command="$command chromium nodejs-default" ;;
  *" alpine "*)
    command="apk add font-noto-cjk font-dejavu fontconfig"
    ((FONT_ONLY)) || command="$command chromium nodejs" ;;
  *) command="" ;;
esac
if ((FONT_ONLY)); then
  echo "error: make book needs a font with Chinese glyphs for the Chinese figures; fc-list finds none for :lang=zh." >&2
else
  echo "error: make test needs Chromium, a font with Chinese glyphs and Node.js; one is missing." >&2
fi
if [ -n "$command" ]; then
  echo "Run:  $command   (then make again)" >&2
else
  echo "Install a CJK font that fontconfig lists for :lang=zh (fc-list :lang=zh)$( ((FONT_ONLY)) || echo ", Chromium ('chromium' or 'chromium-browser' on PATH) and Node.js ('node')")." >&2
fi
exit 1
