// Login: logins/s at concurrency 8 against a bare Bun.serve that verifies the same password against one argon2id
// hash made with our parameters (src/auth/passwords.ts). Each of our logins also writes a session.
import { compareWithBare, roundsNote } from './http'
import { ratioRow, type Row, type RunContext } from './lib/report'
import type { Server } from './lib/servers'

export async function runLogin(ctx: RunContext, ours: Server): Promise<Row> {
  const w = ctx.world
  const request = {
    method: 'POST',
    path: '/api/v9/auth/login',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ login: w.loginUser.email, password: w.password }),
  }
  const result = await compareWithBare(ctx, ours, request, {
    name: 'login',
    connections: 8,
    bareScript: 'login.ts',
    extraSpec: { hash: w.passwordHash },
  })
  const title = 'POST /auth/login vs raw argon2id verify (c8)'
  if ('skipped' in result) return { scenario: title, name: 'login', skipped: result.skipped }
  const notes: string[] = roundsNote(result.ratios)
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
