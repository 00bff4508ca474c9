#!/bin/sh
# The PostgreSQL tests (tests/db/pg-*.test.ts) start their own server from Debian's postgresql package, in a temp dir
# (tests/db/postgres.ts). Install it when it is missing: `apt-get install`, with `apt-get update` first when the
# package lists do not know it yet. CI runs as root. No system cluster is made or started: the tests need only the
# binaries (/usr/lib/postgresql/<version>/bin; PG_BIN_DIR points elsewhere).
set -e
if [ -n "${PG_BIN_DIR:-}" ] && [ -x "$PG_BIN_DIR/postgres" ]; then exit 0; fi
for bin in /usr/lib/postgresql/*/bin/postgres; do
  if [ -x "$bin" ]; then exit 0; fi
done
sudo=''
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then sudo='sudo'; fi
export DEBIAN_FRONTEND=noninteractive
echo "PostgreSQL is missing: installing Debian's postgresql package for the PostgreSQL tests"
if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
  $sudo mkdir -p /etc/postgresql-common
  echo 'create_main_cluster = false' | $sudo tee /etc/postgresql-common/createcluster.conf >/dev/null
fi
$sudo apt-get install -y --no-install-recommends postgresql || { $sudo apt-get update && $sudo apt-get install -y --no-install-recommends postgresql; }
