// Quiet logs and fast gateway heartbeats for every test process.
process.env.LOG_LEVEL ??= 'silent'
process.env.GATEWAY_HEARTBEAT_MS ??= '3000'
process.env.NEW_LOGIN_LOCATION_CHECK ??= 'false'
// Per-route limits count every request from 127.0.0.1 together across the whole suite; they are tested on their own
// (tests/core/rate-limits.test.ts turns them on), elsewhere they would only make parallel tests flaky.
process.env.ROUTE_RATE_LIMITS ??= 'false'
// The PostgreSQL server of tests/db/postgres.ts, if a test file started one: stopped by pid after the last file.
import { afterAll } from 'bun:test'
afterAll(() =>
  (globalThis as { [k: symbol]: (() => void) | undefined })[Symbol.for('lobby-server.test-postgres-stop')]?.(),
)
