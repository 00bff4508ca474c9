#!/bin/sh
# The suite on both databases, side by side: the whole of it on SQLite (streamed), and again on PostgreSQL
# (TEST_DATABASE=postgres: tests/db/postgres.ts starts a server of its own) for the directories whose tests go through
# the stores (printed when it ends). `bun run test:postgres` runs the whole suite on PostgreSQL. Exit 1 if either fails.
# Arguments go to both `bun test` runs.
# Left out of the PostgreSQL pass, for time (2 cores: measured, bench/RESULTS.md, "The suite on both databases"):
# tests/proof's crash, soak and fuzz files, tests/ops and tests/libraries (they pass there, `bun run test:postgres`,
# but beside the SQLite pass on 2 cores the load made timing-bound tests fail in CI: the crash proof once — an issued
# reset token refused after a kill, not reproduced alone, open in issue 30 — and a Gateway flood-window test once),
# tests/web (the Chromium flows, ~2 min) and tests/cluster (its nodes run on PostgreSQL in either pass; its other files
# start a node's parts on the test server, as on SQLite); tests/geo reads no database.
set -u
PG_TESTS="tests/db tests/core tests/lobbies tests/guilds tests/oauth2 tests/auth tests/mfa tests/remote-auth
  tests/commands tests/experiments tests/security tests/gateway tests/voice tests/proof/exactly-once.test.ts
  tests/proof/regressions.test.ts"
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
