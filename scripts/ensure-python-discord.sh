#!/bin/sh
# The discord.py test (tests/libraries/discordpy.test.ts) runs Debian's discord.py (python3-discord, with its aiohttp)
# under Debian's own /usr/bin/python3: PyPI is out of the CI machine's reach. Install it when it is missing:
# `apt-get install`, with `apt-get update` first when the package lists do not know it yet. CI runs as root.
# Where apt cannot install it, a developer machine goes on (the test skips, saying why); CI=true fails here instead.
set -e
python=${DISCORDPY_PYTHON:-/usr/bin/python3}
if [ -x "$python" ] && "$python" -c 'import discord' >/dev/null 2>&1; then exit 0; fi
sudo=''
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then sudo='sudo'; fi
export DEBIAN_FRONTEND=noninteractive
echo "discord.py is missing: installing Debian's python3-discord package for the discord.py test"
if $sudo apt-get install -y --no-install-recommends python3-discord ||
  { $sudo apt-get update && $sudo apt-get install -y --no-install-recommends python3-discord; }; then
  exit 0
fi
if [ "${CI:-}" = true ]; then
  echo "python3-discord could not be installed, and CI must run the discord.py test" >&2
  exit 1
fi
echo "python3-discord could not be installed: tests/libraries/discordpy.test.ts will be skipped"
