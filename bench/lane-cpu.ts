// CPU time per request of the three hot routes' lane handlers, called in-process (the route table laneRoutes()
// builds, 32 requests in flight, no socket and no HTTP parsing): the server's own work, where a wall-clock bench on a
// shared machine cannot resolve a few per cent. The lowest of ROUNDS rounds of N requests per route, from
// process.cpuUsage(). Run it on two checkouts back to back to compare them:
//   bun bench/lane-cpu.ts            (LANE_ROUNDS, LANE_REQUESTS to change the counts)
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

process.env.LOG_LEVEL = 'silent'
process.env.ROUTE_RATE_LIMITS = 'false'
const ROUNDS = Number(process.env.LANE_ROUNDS ?? 7)
const N = Number(process.env.LANE_REQUESTS ?? 20_000)
const IN_FLIGHT = 32

const { startServer } = await import('../src/server')
const { createVerifiedUser } = await import('../src/accounts/users')
const { createSession } = await import('../src/accounts/sessions')
const { createApplication } = await import('../src/oauth2/applications')
const { laneRoutes } = await import('../src/http/lane')
const { hotRoutes } = await import('../src/http/endpoint')
const { modules } = await import('../src/modules')

const dir = mkdtempSync(join(tmpdir(), 'lane-cpu-'))
const running = await startServer({ port: 0, host: '127.0.0.1', databasePath: join(dir, 'bench.sqlite') })
const server = running.app.server!
const user = await createVerifiedUser({
  email: 'bench@example.test',
  password: 'correct horse battery staple',
  username: 'bench',
})
const { token } = await createSession(user.id, { platform: 'bench' })
const application = await createApplication('bench', ['http://localhost/callback'])
const bot = `Bot ${application.bot_token}`
const routes = laneRoutes(modules.flatMap((m) => hotRoutes(m.endpoints ?? [])))

type Handler = (request: Request, srv: typeof server) => Response | Promise<Response>
function request(
  method: string,
  route: string,
  path: string,
  auth: string,
  params: Record<string, string>,
  body?: unknown,
) {
  const handler = (routes as Record<string, Record<string, Handler>>)[route]?.[method]
  if (!handler) throw new Error(`no lane handler for ${method} ${route}`)
  return () => {
    const init: RequestInit = { method, headers: { authorization: auth } }
    if (body !== undefined) {
      init.body = JSON.stringify(body)
      ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
      // As a client sends it: with its length, the lane reads the body in one native read (http/body.ts), not as a
      // stream of chunks (a Request made here has no Content-Length of its own).
      ;(init.headers as Record<string, string>)['content-length'] = String(Buffer.byteLength(init.body))
    }
    const r = Object.assign(new Request(`http://127.0.0.1${path}`, init), { params })
    return handler(r, server)
  }
}

const created = await fetch(`${running.url}/api/v9/lobbies`, {
  method: 'POST',
  headers: { authorization: bot, 'content-type': 'application/json' },
  body: JSON.stringify({ members: [{ id: user.id }] }),
})
const lobby = (await created.json()) as { id: string }
const scenarios: [string, () => Response | Promise<Response>][] = [
  [
    'GET /lobbies/{id} (Bot)',
    request('GET', '/api/v9/lobbies/:lobbyId', `/api/v9/lobbies/${lobby.id}`, bot, { lobbyId: lobby.id }),
  ],
  [
    'POST /lobbies/{id}/messages (Bot)',
    request(
      'POST',
      '/api/v9/lobbies/:lobbyId/messages',
      `/api/v9/lobbies/${lobby.id}/messages`,
      bot,
      { lobbyId: lobby.id },
      { content: 'hello from the bench' },
    ),
  ],
  ['GET /users/@me (user token)', request('GET', '/api/v9/users/@me', '/api/v9/users/@me', token, {})],
]

async function round(call: () => Response | Promise<Response>): Promise<number> {
  const before = process.cpuUsage()
  for (let done = 0; done < N; done += IN_FLIGHT) {
    const batch: Promise<Response>[] = []
    for (let i = 0; i < IN_FLIGHT; i++) batch.push(Promise.resolve(call()))
    for (const response of await Promise.all(batch))
      if (response.status >= 300) throw new Error(`answer ${response.status}: ${await response.text()}`)
  }
  const used = process.cpuUsage(before)
  return (used.user + used.system) / N
}

for (const [name, call] of scenarios) {
  await round(call) // warm-up
  const rounds: number[] = []
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round(call))
  console.log(
    `${name}: ${Math.min(...rounds).toFixed(2)} µs CPU per request (rounds ${rounds.map((r) => r.toFixed(2)).join(', ')})`,
  )
}
await running.stop()
process.exit(0)
