#!/bin/sh
# The suite on both databases, side by side: the whole of it on SQLite (streamed), and again on PostgreSQL
# (TEST_DATABASE=postgres: tests/db/postgres.ts starts a server of its own) for the directories whose tests go through
# the stores (printed when it ends). `bun run test:postgres` runs the whole suite on PostgreSQL. Exit 1 if either fails.
# Arguments go to both `bun test` runs.
# Left out of the PostgreSQL pass, for time (2 cores: measured, bench/RESULTS.md, "The suite on both databases"):
# tests/proof's crash, soak and socket-fuzz files (the crash proof on PostgreSQL failed once in CI beside the SQLite
# pass: an issued reset token refused after a kill; not reproduced alone: open, issue 30),
# tests/web (the Chromium flows, ~2 min) and tests/cluster (its nodes run on PostgreSQL in either pass; its other files
# start a node's parts on the test server, as on SQLite); tests/geo reads no database.
set -u
PG_TESTS="tests/db tests/core tests/lobbies tests/guilds tests/oauth2 tests/auth tests/mfa tests/remote-auth
  tests/commands tests/experiments tests/security tests/gateway tests/voice tests/proof/exactly-once.test.ts
  tests/proof/regressions.test.ts tests/proof/fuzz-rest.test.ts tests/ops tests/libraries"
log=$(mktemp)
# shellcheck disable=SC2086
TEST_DATABASE=postgres bun test "$@" $PG_TESTS >"$log" 2>&1 &
pg=$!
bun test "$@"
sqlite=$?
wait "$pg"
postgres=$?
printf '\n==> the same on PostgreSQL (TEST_DATABASE=postgres)\n'
cat "$log"
rm -f "$log"
[ "$sqlite" -eq 0 ] && [ "$postgres" -eq 0 ]
