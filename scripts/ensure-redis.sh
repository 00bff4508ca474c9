#!/bin/sh
# The Redis tests (tests/cluster/) start their own server from Debian's redis-server package, in a temp dir
# (tests/cluster/redis.ts). Install it when it is missing: `apt-get install`, with `apt-get update` first when the
# package lists do not know it yet. CI runs as root. The tests need only the binary (REDIS_SERVER points elsewhere);
# where the package starts a system service, the tests leave it alone (they listen on ports of their own).
set -e
if [ -n "${REDIS_SERVER:-}" ] && [ -x "$REDIS_SERVER" ]; then exit 0; fi
if [ -x /usr/bin/redis-server ]; then exit 0; fi
sudo=''
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then sudo='sudo'; fi
export DEBIAN_FRONTEND=noninteractive
echo "Redis is missing: installing Debian's redis-server package for the Redis tests"
$sudo apt-get install -y --no-install-recommends redis-server || { $sudo apt-get update && $sudo apt-get install -y --no-install-recommends redis-server; }
