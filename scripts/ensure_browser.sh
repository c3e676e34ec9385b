#!/usr/bin/env bash
# The last step of `make test` loads every page of both editions of the built site in headless
# Chromium, and the Chinese pages (and the Chinese figures `make book` draws) need a font with
# Chinese glyphs. Check for both before any work; install them where that is possible (root on
# Debian), otherwise stop at once with the command to run. Node.js runs the independent
# cross-check of the canonical JSON (tests/test_jcs_check.py), which make test requires.
set -euo pipefail
PACKAGES="chromium fonts-dejavu-core fonts-wqy-zenhei nodejs"  # fonts-wqy-zenhei: the Chinese edition's CJK font
have_browser() { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; }
have_cjk_font() { command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list :lang=zh family 2>/dev/null)" ]; }
have_node() { command -v node >/dev/null 2>&1; }
if have_browser && have_cjk_font && have_node; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1 && grep -qi '^ID=debian' /etc/os-release 2>/dev/null; then
  echo "Chromium, a CJK font or Node.js not found: installing them for the site and JSON checks ($PACKAGES)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PACKAGES >/dev/null
  have_browser && have_cjk_font && have_node && exit 0
  echo "error: apt-get ran but chromium or node is not on PATH, or fc-list finds no font for :lang=zh" >&2
  exit 1
fi
echo "error: make test needs Chromium, a font with Chinese glyphs and Node.js; one is missing." >&2
echo "On Debian run:  sudo apt-get update && sudo apt-get install -y $PACKAGES   (then make test again);" >&2
echo "elsewhere, install Chromium so that 'chromium' or 'chromium-browser' is on PATH, a CJK font, and Node.js ('node')." >&2
exit 1
