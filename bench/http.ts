// REST hot paths: each measured with wrk against our server, then against a bare Bun.serve answering the bytes our
// server answered to the same request (captured once, just before), in the same run.
// Adding a hot path is one entry in `httpScenarios`.
import { join } from 'node:path'
import type { Row, RunContext } from './lib/report'
import { ratioRow } from './lib/report'
import { cpuMs } from './lib/machine'
import { capture, startBare, type Server } from './lib/servers'
import { wrk, type Request, type WrkOptions, type WrkResult } from './lib/wrk'
import type { World } from './lib/world'

export type HttpScenario = {
  /** name on the command line: `bun run bench lobby-get` */
  name: string
  /** row title */
  title: string
  /** the target for ours/bare req/s, if it sets one */
  target?: number
  request(world: World): Request
}

const json = (value: unknown) => JSON.stringify(value)

export const httpScenarios: HttpScenario[] = [
  {
    // The floor every route stands on: Elysia, the request id, rate-limit bookkeeping, the access log, no database.
    name: 'healthz',
    title: 'GET /healthz (no token, no database)',
    request: () => ({ method: 'GET', path: '/healthz', headers: {} }),
  },
  {
    name: 'lobby-get',
    title: 'GET /lobbies/{id} (Bot)',
    target: 0.5,
    request: (w) => ({ method: 'GET', path: `/api/v9/lobbies/${w.lobby.id}`, headers: { authorization: w.bot } }),
  },
  {
    name: 'lobby-message-post',
    title: 'POST /lobbies/{id}/messages (Bot)',
    target: 0.2,
    request: (w) => ({
      method: 'POST',
      path: `/api/v9/lobbies/${w.chatLobby.id}/messages`,
      headers: { authorization: w.bot, 'content-type': 'application/json' },
      body: json({ content: 'gg, next round on harbor?', metadata: { kind: 'chat' } }),
    }),
  },
  {
    name: 'lobby-messages-get',
    title: 'GET /lobbies/{id}/messages (Bot, 50 messages)',
    request: (w) => ({
      method: 'GET',
      path: `/api/v9/lobbies/${w.lobby.id}/messages`,
      headers: { authorization: w.bot },
    }),
  },
  {
    name: 'channel-messages-get',
    title: 'GET /channels/{id}/messages?limit=50 (4 authors)',
    target: 0.3,
    request: (w) => ({
      method: 'GET',
      path: `/api/v9/channels/${w.channel.id}/messages?limit=50`,
      headers: { authorization: w.main.token },
    }),
  },
  {
    name: 'lobby-put',
    title: 'PUT /lobbies (join by secret, Bearer)',
    request: (w) => ({
      method: 'PUT',
      path: '/api/v9/lobbies',
      headers: { authorization: w.bearer, 'content-type': 'application/json' },
      body: json({ secret: w.secret }),
    }),
  },
  {
    // Issue 44: a game backend asking a token for a player it already has (the capture made the account). No password
    // hashing on this path: a lookup, one INSERT of the token's hash, an Ed25519 signature (the id_token).
    name: 'provisional-token',
    title: 'POST /partner-sdk/token/bot (Bot, existing account)',
    request: (w) => ({
      method: 'POST',
      path: '/api/v9/partner-sdk/token/bot',
      headers: { authorization: w.bot, 'content-type': 'application/json' },
      body: json({ external_user_id: 'bench-player-1', preferred_global_name: 'Bench' }),
    }),
  },
  {
    name: 'users-me',
    title: 'GET /users/@me (user token)',
    target: 0.5,
    request: (w) => ({ method: 'GET', path: '/api/v9/users/@me', headers: { authorization: w.main.token } }),
  },
  {
    name: 'auth-sessions',
    title: 'GET /auth/sessions (user token, 5 sessions)',
    request: (w) => ({ method: 'GET', path: '/api/v9/auth/sessions', headers: { authorization: w.main.token } }),
  },
  {
    // Another branch adds GET /experiments; until it exists our server answers 404 and the row says so.
    name: 'experiments',
    title: 'GET /experiments (user token, 50 definitions)',
    target: 0.4,
    request: (w) => ({ method: 'GET', path: '/api/v9/experiments', headers: { authorization: w.main.token } }),
  },
]

/** One request as fetch sends it (the capture the bare server replays). */
export function send(server: Server, request: Request): Promise<Response> {
  return fetch(`${server.url}${request.path}`, { method: request.method, headers: request.headers, body: request.body })
}

/**
 * Measure one request against ours (already running) and a bare baseline answering our captured bytes.
 * `bareScript` picks the baseline (bench/bare/http.ts unless given); `extraSpec` is added to its spec file.
 * Both are warmed once, then measured in `ctx.rounds` alternating rounds (ours, bare, ours, bare, ...) of
 * `ctx.seconds / rounds` each, so a slow spell of the (shared) machine falls on both; the round with the median
 * ratio is returned, with every round's ratio for the notes.
 */
export async function compareWithBare(
  ctx: RunContext,
  ours: Server,
  request: Request,
  options: {
    connections?: number
    bareScript?: string
    extraSpec?: Record<string, unknown>
    name: string
    /** Measured seconds per side, all rounds together (default ctx.seconds). */
    seconds?: number
  },
) {
  const rounds = Math.max(1, ctx.rounds)
  const seconds = Math.max(1, Math.round((options.seconds ?? ctx.seconds) / rounds))
  const wrkOptions = { seconds, connections: options.connections ?? ctx.connections, threads: 1 }
  const warm = { ...wrkOptions, seconds: ctx.warmSeconds }
  const response = await send(ours, request)
  const captured = await capture(response)
  if (captured.status >= 300)
    return {
      skipped: `our server answered ${captured.status}: ${Buffer.from(captured.bodyBase64, 'base64').toString().slice(0, 120)}`,
    }
  const specFile = join(ctx.dir, `bare-${options.name}.json`)
  await Bun.write(specFile, JSON.stringify({ ...captured, ...options.extraSpec }))
  const bare = await startBare(options.bareScript ?? 'http.ts', specFile)
  try {
    await wrk(ours.url, request, warm, ctx.dir)
    await wrk(bare.url, request, warm, ctx.dir)
    const measured: { ours: Measured; bare: Measured; ratio: number }[] = []
    for (let i = 0; i < rounds; i++) {
      const o = await measure(ours, request, wrkOptions, ctx.dir)
      const b = await measure(bare, request, wrkOptions, ctx.dir)
      measured.push({ ours: o, bare: b, ratio: o.rps / b.rps })
    }
    const ratios = measured.map((m) => m.ratio)
    const median = [...measured].sort((a, b) => a.ratio - b.ratio)[Math.floor((rounds - 1) / 2)]
    return {
      ours: median.ours,
      bare: median.bare,
      ratios,
      bodyBytes: Buffer.from(captured.bodyBase64, 'base64').length,
    }
  } finally {
    await bare.stop()
  }
}

type Measured = WrkResult & { cpuMsPerRequest: number }

/** One wrk run, with the server process's CPU time (every thread) per request answered. */
async function measure(server: Server, request: Request, options: WrkOptions, dir: string): Promise<Measured> {
  const before = cpuMs(server.pid)
  const result = await wrk(server.url, request, options, dir)
  return { ...result, cpuMsPerRequest: (cpuMs(server.pid) - before) / Math.max(1, result.requests) }
}

/** "ratios by round: 0.41, 0.45, 0.39" when there was more than one round. */
export function roundsNote(ratios: number[]): string[] {
  return ratios.length > 1 ? [`ratios by round ${ratios.map((r) => r.toFixed(2)).join(', ')} (median shown)`] : []
}

export async function runHttpScenario(ctx: RunContext, ours: Server, scenario: HttpScenario): Promise<Row> {
  const result = await compareWithBare(ctx, ours, scenario.request(ctx.world), { name: scenario.name })
  if ('skipped' in result) return { scenario: scenario.title, name: scenario.name, skipped: result.skipped }
  const { ours: o, bare: b } = result
  const notes: string[] = [`${result.bodyBytes} B body`, ...roundsNote(result.ratios)]
  if (o.non2xx || o.errors) notes.push(`ours: ${o.non2xx} non-2xx, ${o.errors} socket errors`)
  if (b.non2xx || b.errors) notes.push(`bare: ${b.non2xx} non-2xx, ${b.errors} socket errors`)
  return ratioRow({
    scenario: scenario.title,
    name: scenario.name,
    ours: o.rps,
    bare: b.rps,
    unit: 'req/s',
    oursP99: o.p99Ms,
    bareP99: b.p99Ms,
    target: scenario.target,
    note: notes.join('; '),
  })
}
