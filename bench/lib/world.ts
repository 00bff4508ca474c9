// The data the scenarios run against, seeded before anything is measured: the application through the CLI
// (`server app create`), users through bench/lib/bulk-users.ts, everything else through the HTTP API of a running
// server, as a client would.
import { join } from 'node:path'
import { BUN, ROOT } from './machine'
import type { Server } from './servers'
import { ourEnv } from './servers'
import { BENCH_PASSWORD } from './world-constants'

export type User = { id: string; token: string; email: string }

export type World = {
  dir: string
  app: { id: string; bot_token: string; client_secret: string }
  /** `Bot <token>` */
  bot: string
  users: User[]
  /** the precomputed argon2id hash every bench user's password has */
  passwordHash: string
  password: string
  /** users[0]: a few sessions, member of the lobbies and the guild */
  main: User
  /** `Bearer <token>` of users[0] with identify lobbies.write */
  bearer: string
  /** users[1]: the login scenario signs in as this user (each login adds a session) */
  loginUser: User
  /** 4 members, metadata, 50 messages from two authors */
  lobby: { id: string }
  /** the lobby POST /messages writes to */
  chatLobby: { id: string }
  /** PUT /lobbies joins this secret */
  secret: string
  /** a guild text channel with 50 messages from 4 authors */
  channel: { id: string; guildId: string }
  /** a lobby with the first min(1000, users) users as members, for the Gateway fan-out (every next 1000 have one too) */
  fanoutLobby: { id: string }
}

async function cli(dir: string, args: string[]): Promise<any> {
  const proc = Bun.spawnSync([BUN, 'src/main.ts', ...args], { cwd: ROOT, env: ourEnv(dir, 0) })
  if (proc.exitCode !== 0) throw new Error(`server ${args.join(' ')}: ${proc.stderr.toString()}`)
  return JSON.parse(proc.stdout.toString())
}

/**
 * 50 experiment definitions as an operator might load them: 40 user experiments (two buckets over split rollouts,
 * every other one with an override list, every tenth for the developer portal only) and 10 guild experiments whose populations
 * filter by feature, member count and ID range.
 */
export function fiftyExperiments() {
  return Array.from({ length: 50 }, (_, i) => {
    const guild = i % 5 === 0
    const ranges = [
      { bucket: 1, rollout: [{ s: 0, e: 2999 + i * 100 }] },
      { bucket: 2, rollout: [{ s: 3000 + i * 100, e: 9999 }] },
    ]
    return {
      name: `2026-11_bench_${guild ? 'guild' : 'user'}_${i}`,
      kind: guild ? 'guild' : 'user',
      revision: i + 1,
      ...(i % 10 === 1 ? { platform: 'DEVELOPER_PORTAL' } : {}),
      populations: guild
        ? [
            {
              ranges,
              filters: {
                guild_has_feature: { guild_features: ['COMMUNITY'] },
                guild_member_count_range: { min_id: 10, max_id: 5000 },
              },
            },
            {
              ranges: [
                { bucket: 1, rollout: [{ s: 0, e: 4999 }] },
                { bucket: 0, rollout: [{ s: 5000, e: 9999 }] },
              ],
              filters: { guild_id_range: { min_id: '0', max_id: '9223372036854775807' } },
            },
          ]
        : [{ ranges }],
      overrides:
        i % 2 ? [{ b: 1, k: Array.from({ length: 5 }, (_, j) => String(10n ** 17n + BigInt(i * 10 + j))) }] : [],
    }
  })
}

/** Seeds what needs no running server: the application (CLI), 50 experiment definitions (CLI) and `userCount` users with a session each. */
export async function seedOffline(dir: string, userCount: number) {
  const app = await cli(dir, ['app', 'create', '--name', 'bench', '--redirect-uri', 'http://localhost/callback'])
  const definitions = join(dir, 'experiments.json')
  await Bun.write(definitions, JSON.stringify(fiftyExperiments()))
  const loaded = await cli(dir, ['experiments', 'load', definitions])
  if (loaded.loaded !== 50) throw new Error(`experiments load: ${JSON.stringify(loaded)}`)
  const out = join(dir, 'users.json')
  const proc = Bun.spawnSync([BUN, 'bench/lib/bulk-users.ts', String(userCount), out], {
    cwd: ROOT,
    env: ourEnv(dir, 0),
  })
  if (proc.exitCode !== 0) throw new Error(`bulk users: ${proc.stderr.toString()}`)
  const { users, hash } = (await Bun.file(out).json()) as { users: User[]; hash: string }
  return { app, users, hash }
}

async function call(
  server: Server,
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
): Promise<any> {
  const headers: Record<string, string> = {}
  if (token) headers.authorization = token
  if (body !== undefined) headers['content-type'] = 'application/json'
  const r = await fetch(`${server.url}/api/v9${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await r.text()
  if (r.status >= 300) throw new Error(`seed ${method} ${path}: ${r.status} ${text}`)
  return text ? JSON.parse(text) : null
}

async function bearerFor(server: Server, user: User, app: World['app']): Promise<string> {
  const q = new URLSearchParams({
    client_id: app.id,
    response_type: 'code',
    redirect_uri: 'http://localhost/callback',
    scope: 'identify lobbies.write',
  })
  const { location } = await call(server, 'POST', `/oauth2/authorize?${q}`, user.token, { authorize: true })
  const code = new URL(location).searchParams.get('code')!
  const r = await fetch(`${server.url}/api/v10/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${btoa(`${app.id}:${app.client_secret}`)}`,
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'http://localhost/callback',
    }).toString(),
  })
  if (r.status !== 200) throw new Error(`seed token: ${r.status} ${await r.text()}`)
  return `Bearer ${((await r.json()) as { access_token: string }).access_token}`
}

/** Seeds the rest through the API of a running server. Needs at least 5 users. */
export async function seedOnline(
  server: Server,
  dir: string,
  offline: Awaited<ReturnType<typeof seedOffline>>,
): Promise<World> {
  const { app, users, hash } = offline
  const bot = `Bot ${app.bot_token}`
  const [main, loginUser, a, b, c] = users
  // A few more sessions for GET /auth/sessions (logins as a client does; each verifies the password).
  for (let i = 0; i < 4; i++)
    await call(server, 'POST', '/auth/login', undefined, { login: main.email, password: BENCH_PASSWORD })
  const bearer = await bearerFor(server, main, app)

  const lobby = await call(server, 'POST', '/lobbies', bot, {
    metadata: { mode: 'ranked', map: 'harbor', region: 'eu-west' },
    members: [main, a, b, c].map((u, i) => ({ id: u.id, metadata: { team: i % 2 ? 'blue' : 'red' } })),
  })
  const mainBearer = bearer
  for (let i = 0; i < 50; i++) {
    await call(server, 'POST', `/lobbies/${lobby.id}/messages`, i % 2 ? bot : mainBearer, {
      content: `lobby message ${i}: gg, next round on harbor?`,
    })
  }
  const chatLobby = await call(server, 'POST', '/lobbies', bot, { members: [main, a].map((u) => ({ id: u.id })) })
  const secret = 'bench-lobby-secret'
  await call(server, 'PUT', '/lobbies', bearer, { secret })

  const guild = await call(server, 'POST', '/guilds', main.token, { name: 'bench guild' })
  const channels = (await call(server, 'GET', `/guilds/${guild.id}/channels`, main.token)) as {
    id: string
    type: number
  }[]
  const channel = channels.find((ch) => ch.type === 0)!
  const invite = await call(server, 'POST', `/channels/${channel.id}/invites`, main.token, {})
  for (const u of [a, b, c]) await call(server, 'POST', `/invites/${invite.code}`, u.token)
  const authors = [main, a, b, c]
  for (let i = 0; i < 50; i++) {
    await call(server, 'POST', `/channels/${channel.id}/messages`, authors[i % 4].token, {
      content: `channel message ${i} from author ${i % 4}, with some words to look like chat`,
    })
  }

  // Every user in one lobby of 1000 (the most a lobby holds), so each Gateway socket follows one; the first is the
  // fan-out's.
  const memberLobbies: { id: string }[] = []
  for (let start = 0; start < users.length; start += 1000) {
    const created = await call(server, 'POST', '/lobbies', bot, {})
    const members = users.slice(start, start + 1000)
    for (let i = 0; i < members.length; i += 25) {
      await call(
        server,
        'POST',
        `/lobbies/${created.id}/members/bulk`,
        bot,
        members.slice(i, i + 25).map((u) => ({ id: u.id })),
      )
    }
    memberLobbies.push({ id: created.id })
  }

  return {
    dir,
    app,
    bot,
    users,
    passwordHash: hash,
    password: BENCH_PASSWORD,
    main,
    bearer,
    loginUser,
    lobby: { id: lobby.id },
    chatLobby: { id: chatLobby.id },
    secret,
    channel: { id: channel.id, guildId: guild.id },
    fanoutLobby: memberLobbies[0],
  }
}
