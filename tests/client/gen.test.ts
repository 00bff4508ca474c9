// suite: one pass
// client/src/api.gen.ts is what `bun run gen:client` writes from the server's routes today (CI fails on a stale file),
// and the types it gives compile as a game developer uses them: typed-sample.ts, with @ts-expect-error lines on
// mistakes (a wrong body type, a route that does not exist, a query parameter the route does not take).
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

  test('a typed sample compiles, and each mistake in it is a type error', () => {
    const tsc = join(root, 'node_modules/typescript/bin/tsc')
    const args = ['--noEmit', '--strict', '--target', 'ES2022', '--module', 'ESNext', '--moduleResolution', 'bundler']
    const run = Bun.spawnSync(
      [
        process.execPath,
        tsc,
        ...args,
        '--lib',
        'ES2022,DOM',
        '--skipLibCheck',
        '--types',
        'node',
        'tests/client/typed-sample.ts',
      ],
      { cwd: root },
    )
    expect(`${run.stdout}${run.stderr}`).toBe('')
    expect(run.exitCode).toBe(0)
  }, 30_000)
})
