// suite: one pass
// client/src/api.gen.ts is what `bun run gen:client` writes from the server's routes today (CI fails on a stale file).
// The types it gives are checked by `bun run typecheck` over typed-sample.ts: it compiles as a game developer writes
// it, and each of its @ts-expect-error lines (a wrong body type, a route that does not exist, a query parameter the
// route does not take, a field an answer or event does not have) must be an error.
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'

const root = join(import.meta.dir, '../..')

describe('the generated API types', () => {
  test('client/src/api.gen.ts is up to date with the routes (else: bun run gen:client)', () => {
    const run = Bun.spawnSync([process.execPath, 'scripts/gen-client.ts', '--check'], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'error' },
    })
    expect(`${run.stdout}${run.stderr}`).toContain('up to date')
    expect(run.exitCode).toBe(0)
  })
})
