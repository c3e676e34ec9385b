#!/usr/bin/env bash
# The last step of `make test` loads every page of the built site in headless Chromium.
# Check for it before any work; install it where that is possible (root on Debian),
# otherwise stop at once with the command to run.
set -euo pipefail
PACKAGES="chromium fonts-dejavu-core fonts-wqy-zenhei"  # the glossary needs a CJK font
have_browser() { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; }
if have_browser; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1 && grep -qi '^ID=debian' /etc/os-release 2>/dev/null; then
  echo "Chromium not found: installing it for the browser check of the site ($PACKAGES)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PACKAGES >/dev/null
  have_browser && exit 0
  echo "error: apt-get ran but no chromium is on PATH" >&2
  exit 1
fi
echo "error: the browser check of the site needs Chromium, which is not installed." >&2
echo "On Debian run:  sudo apt-get update && sudo apt-get install -y $PACKAGES   (then make test again);" >&2
echo "elsewhere, install Chromium so that 'chromium' or 'chromium-browser' is on PATH." >&2
exit 1
