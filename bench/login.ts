// Login: logins/s at concurrency 8 against a bare Bun.serve that verifies the same password against one argon2id
// hash made with our parameters (src/auth/passwords.ts). Each of our logins also writes a session.
// A login takes ~50 ms of one core, so a 3 s round holds ~60 of them and the 8 still in flight when wrk stops are a
// tenth of that: login rounds are longer (BENCH_LOGIN_SECONDS, 30 per side by default), and the notes give the
// server's CPU time per login (every thread, /proc), which the end of a round does not blur.
import { compareWithBare, roundsNote } from './http'
import { ratioRow, type Row, type RunContext } from './lib/report'
import type { Server } from './lib/servers'
import type { World } from './lib/world'

/** The login request of the seeded world (the bench and `--profile login`). */
export const loginRequest = (w: World) => ({
  method: 'POST',
  path: '/api/v9/auth/login',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ login: w.loginUser.email, password: w.password }),
})

export async function runLogin(ctx: RunContext, ours: Server): Promise<Row> {
  const request = loginRequest(ctx.world)
  const result = await compareWithBare(ctx, ours, request, {
    name: 'login',
    connections: 8,
    bareScript: 'login.ts',
    extraSpec: { hash: ctx.world.passwordHash },
    seconds: Number(process.env.BENCH_LOGIN_SECONDS ?? 30),
  })
  const title = 'POST /auth/login vs raw argon2id verify (c8)'
  if ('skipped' in result) return { scenario: title, name: 'login', skipped: result.skipped }
  const notes: string[] = [
    ...roundsNote(result.ratios),
    `server CPU per login ${result.ours.cpuMsPerRequest.toFixed(1)} ms ours, ${result.bare.cpuMsPerRequest.toFixed(1)} ms bare`,
  ]
  if (result.ours.non2xx || result.ours.errors)
    notes.push(`ours: ${result.ours.non2xx} non-2xx, ${result.ours.errors} socket errors`)
  return ratioRow({
    scenario: title,
    name: 'login',
    ours: result.ours.rps,
    bare: result.bare.rps,
    unit: 'logins/s',
    oursP99: result.ours.p99Ms,
    bareP99: result.bare.p99Ms,
    target: 0.9,
    note: notes.join('; '),
  })
}
