#!/bin/sh
# The browser tests (tests/web) drive Debian's Chromium through playwright-core. Install it when it is missing:
# `apt-get install`, with `apt-get update` first when the package lists do not know it yet. CI runs as root.
set -e
if [ -n "${CHROMIUM_PATH:-}" ] && [ -x "$CHROMIUM_PATH" ]; then exit 0; fi
if [ -x /usr/bin/chromium ]; then exit 0; fi
sudo=''
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then sudo='sudo'; fi
export DEBIAN_FRONTEND=noninteractive
echo "Chromium is missing: installing Debian's chromium package for the browser tests"
$sudo apt-get install -y --no-install-recommends chromium || { $sudo apt-get update && $sudo apt-get install -y --no-install-recommends chromium; }
