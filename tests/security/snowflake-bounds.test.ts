// Ids past PostgreSQL's bigint (issue 40, finding 3). Ids are text in both databases, but pages order them by number
// (CAST(id AS bigint) on PostgreSQL, AS INTEGER on SQLite): a cursor of 2^63 or more overflowed the cast on
// PostgreSQL (500, an ERROR line), where SQLite clamps it (200). The rule now, on every route: an id of 2^63 or more
// in a path finds nothing (404), as a paging cursor it is past every id (the page SQLite gave), in a body it is
// Discord's 50035 "is not snowflake"; 2^64 and more are "not snowflake" as before. The walk puts each of the three
// values into every id slot of every documented route (path, cursors and ids of the query, snowflakes of the body),
// as each caller the route accepts, and asserts no 5xx and no ERROR line in the log.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { config } from '../../src/config'
import { captureLog, setLogOptions } from '../../src/core/log'
import { api, resetWorld, server } from '../helpers'
import { createLobby } from '../lobbies/helpers'
import { bearerFor, tokenRequest } from '../oauth2/helpers'
import { botInGuild, join } from '../guilds/helpers'

const P63 = '9223372036854775808' // 2^63: the first id past bigint
const P64_1 = '18446744073709551615' // 2^64 - 1
const P64 = '18446744073709551616' // 2^64: not a snowflake at all
const BIG = [P63, P64_1, P64]

type World = Awaited<ReturnType<typeof makeWorld>>

async function makeWorld() {
  const made = await botInGuild('Bounds')
  const { app, owner, guild, channelId } = made
  const bot = `Bot ${app.bot_token}`
  const bearer = await bearerFor(owner, app, 'identify guilds lobbies.write')
  const member = await join(channelId, owner)
  const banned = await join(channelId, owner)
  expect((await api('PUT', `/guilds/${guild.id}/bans/${banned.id}`, { token: owner.token, body: {} })).status).toBe(204)
  const role = await api('POST', `/guilds/${guild.id}/roles`, { token: owner.token, body: { name: 'r' } })
  const messages: string[] = []
  for (const content of ['one', 'two', 'three'])
    messages.push(
      (await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content } })).body.id,
    )
  await api('PUT', `/channels/${channelId}/messages/${messages[0]}/reactions/%F0%9F%91%8D/@me`, { token: owner.token })
  const invite = await api('POST', `/channels/${channelId}/invites`, { token: owner.token, body: { max_age: 0 } })
  const lobby = await createLobby(bot, { members: [{ id: owner.id }, { id: member.id }] })
  const lobbyMessages: string[] = []
  for (const content of ['a', 'b', 'c'])
    lobbyMessages.push((await api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content } })).body.id)
  const command = await api('POST', `/applications/${app.id}/commands`, {
    token: bot,
    body: { name: 'ping', description: 'ping' },
  })
  return {
    app,
    bot,
    bearer,
    owner,
    member,
    banned,
    guild: guild.id as string,
    channel: channelId,
    role: role.body.id as string,
    messages,
    invite: invite.body.code as string,
    lobby: lobby.id,
    lobbyMessages,
    command: command.body.id as string,
  }
}

let world: World
const errors: string[] = []
beforeAll(async () => {
  await server()
  world = await makeWorld()
  // Every ERROR line while the routes are walked: a failed query logs one (with its 500).
  setLogOptions('error', 'text')
  captureLog((line) => void (/ ERROR /.test(line) && errors.push(line)))
}, 60_000)
afterAll(() => {
  captureLog(undefined)
  setLogOptions(config().logLevel, config().logFormat)
})

/** A real value for a path slot that is not the one under test, so the request gets as far as it can. */
function real(name: string, path: string): string {
  switch (name) {
    case 'guildId':
      return world.guild
    case 'channelId':
      return world.channel
    case 'userId':
      return world.member.id
    case 'roleId':
      return world.role
    case 'messageId':
      return path.includes('/lobbies/') ? world.lobbyMessages[1] : world.messages[1]
    case 'lobbyId':
      return world.lobby
    case 'applicationId':
      return world.app.id
    case 'commandId':
      return world.command
    case 'code':
      return world.invite
    case 'type':
      return 'totp'
    case 'emoji':
      return '%F0%9F%91%8D'
    default:
      return '1'
  }
}

/** A path slot that holds an id. */
const isIdSlot = (name: string) => name === 'id' || name.endsWith('Id')
/** A query parameter that holds an id. */
const isIdQuery = (name: string) => ['before', 'after', 'around'].includes(name) || name.endsWith('_id')

type Schema = Record<string, any>
const isSnowflakeSchema = (s: Schema) =>
  s?.type === 'string' && typeof s.pattern === 'string' && /\{1,20\}\$$/.test(s.pattern)
const hasSnowflake = (s: Schema | undefined): boolean =>
  !!s && typeof s === 'object' && (isSnowflakeSchema(s) || Object.values(s).some((v) => hasSnowflake(v)))

/**
 * A body for a schema: its required fields with plain valid values; with `id`, every snowflake field (optional ones
 * too) holds `id`.
 */
function fill(s: Schema, id?: string): unknown {
  if (!s || typeof s !== 'object') return null
  if (isSnowflakeSchema(s)) return id ?? '1'
  if ('const' in s) return s.const
  if (s.anyOf) {
    const members: Schema[] = s.anyOf
    const pick = (id && members.find((m) => hasSnowflake(m))) || members.find((m) => m.type === 'object') || members[0]
    return fill(pick, id)
  }
  if (s.enum) return s.enum[0]
  const type = Array.isArray(s.type) ? s.type[0] : s.type
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {}
      const required = new Set<string>(s.required ?? [])
      for (const [key, value] of Object.entries<Schema>(s.properties ?? {}))
        if (required.has(key) || (id && hasSnowflake(value))) out[key] = fill(value, id)
      return out
    }
    case 'array':
      return (id && hasSnowflake(s.items)) || s.minItems ? [fill(s.items, id)] : []
    case 'string':
      if (s.format === 'uri') return 'https://example.com/'
      return 'x'.repeat(Math.max(1, s.minLength ?? 1))
    case 'integer':
    case 'number':
      return s.minimum ?? 0
    case 'boolean':
      return false
    case 'null':
      return null
  }
  return null
}

type Operation = {
  parameters?: { name: string; in: string }[]
  requestBody?: any
  security?: Record<string, unknown>[]
}

function tokens(op: Operation): (string | undefined)[] {
  const kinds = (op.security ?? []).flatMap((s) => Object.keys(s))
  const out: (string | undefined)[] = []
  if (kinds.includes('UserToken')) out.push(world.owner.token)
  if (kinds.includes('BotToken')) out.push(world.bot)
  if (kinds.includes('OAuth2Bearer')) out.push(world.bearer)
  if (out.length === 0) out.push(undefined)
  return out
}

describe('an id of 2^63 or more, anywhere a route takes one', () => {
  const notSnowflake = (value: string) => [
    { code: 'NUMBER_TYPE_COERCE', message: `Value "${value}" is not snowflake.` },
  ]
  const ids = (r: { body: { id?: string; user?: { id: string } }[] }) => r.body.map((x) => x.id ?? x.user?.id)

  test('as a paging cursor it is past every id: before gives the newest page, after nothing (both databases)', async () => {
    const { owner, bot, bearer, guild, channel, lobby, messages, lobbyMessages, banned } = world
    for (const big of [P63, P64_1]) {
      const lobbyPage = (q: string) => api('GET', `/lobbies/${lobby}/messages?${q}`, { token: bearer })
      expect(ids(await lobbyPage(`before=${big}`))).toEqual([...lobbyMessages].reverse())
      expect(ids(await lobbyPage(`after=${big}`))).toEqual([])
      expect(ids(await lobbyPage(`after=${lobbyMessages[0]}&before=${big}`))).toEqual([
        lobbyMessages[2],
        lobbyMessages[1],
      ])
      const channelPage = (q: string) => api('GET', `/channels/${channel}/messages?${q}`, { token: owner.token })
      expect(ids(await channelPage(`before=${big}`))).toEqual([...messages].reverse())
      expect(ids(await channelPage(`around=${big}`))).toEqual([...messages].reverse())
      expect(ids(await channelPage(`after=${big}`))).toEqual([])
      const members = await api('GET', `/guilds/${guild}/members?limit=1000&after=${big}`, { token: bot })
      expect([members.status, members.body]).toEqual([200, []])
      const bans = (q: string) => api('GET', `/guilds/${guild}/bans?${q}`, { token: owner.token })
      expect(ids(await bans(`before=${big}`))).toEqual([banned.id])
      expect(ids(await bans(`after=${big}`))).toEqual([])
      const reactions = `/channels/${channel}/messages/${messages[0]}/reactions/%F0%9F%91%8D`
      expect(ids(await api('GET', `${reactions}?after=0`, { token: owner.token }))).toEqual([owner.id])
      expect(ids(await api('GET', `${reactions}?after=${big}`, { token: owner.token }))).toEqual([])
      const guilds = (q: string) => api('GET', `/users/@me/guilds?${q}`, { token: owner.token })
      expect(ids(await guilds(`before=${big}`))).toEqual([guild])
      expect(ids(await guilds(`after=${big}`))).toEqual([])
    }
    // 2^64 and more are not snowflakes, as before.
    const r = await api('GET', `/lobbies/${lobby}/messages?before=${P64}`, { token: bot })
    expect([r.status, r.body.errors]).toEqual([400, { before: { _errors: notSnowflake(P64) } }])
  })

  test("as an OAuth2 client_id (form body or Basic) it names no application: RFC 6749's invalid_client", async () => {
    for (const big of [P63, P64_1, P64]) {
      const form = { grant_type: 'client_credentials', scope: 'identify' }
      for (const r of [
        await tokenRequest('/oauth2/token', { ...form, client_id: big, client_secret: 'x' }),
        await tokenRequest('/oauth2/token', form, [big, 'x']),
        await tokenRequest('/oauth2/token/revoke', { token: 'x' }, [big, 'x']),
      ])
        expect([r.status, r.body.error]).toEqual([401, 'invalid_client'])
    }
  })

  test('in a path it names nothing: 404 with the unknown thing', async () => {
    const { owner, bot, channel, guild, lobby } = world
    for (const big of [P63, P64_1]) {
      for (const [path, token, code] of [
        [`/guilds/${big}`, owner.token, 10004],
        [`/channels/${big}/messages`, owner.token, 10003],
        [`/channels/${channel}/messages/${big}`, owner.token, 10008],
        [`/guilds/${guild}/members/${big}`, owner.token, 10007],
        [`/guilds/${guild}/bans/${big}`, owner.token, 10026],
        [`/users/${big}`, owner.token, 10013],
        [`/lobbies/${big}`, bot, 10031],
      ] as const) {
        const r = await api('GET', path, { token })
        expect([path, r.status, r.body.code]).toEqual([path, 404, code])
      }
      expect((await api('DELETE', `/lobbies/${lobby}/members/${big}`, { token: bot })).status).toBe(204)
    }
  })

  test('in a body it is Discord\'s 50035 "is not snowflake", at the field', async () => {
    const { owner, bot, guild, channel, lobby, member } = world
    for (const big of [P63, P64_1]) {
      const cases: [string, string, string, unknown, unknown][] = [
        [
          'PATCH',
          `/guilds/${guild}/members/${member.id}`,
          owner.token,
          { roles: [big] },
          { roles: { 0: { _errors: notSnowflake(big) } } },
        ],
        [
          'POST',
          '/lobbies',
          bot,
          { members: [{ id: big }] },
          { members: { 0: { id: { _errors: notSnowflake(big) } } } },
        ],
        ['POST', `/lobbies/${lobby}/members/bulk`, bot, [{ id: big }], { 0: { id: { _errors: notSnowflake(big) } } }],
        [
          'PATCH',
          `/lobbies/${lobby}/channel-linking`,
          bot,
          { channel_id: big },
          { channel_id: { _errors: notSnowflake(big) } },
        ],
        [
          'POST',
          `/channels/${channel}/messages/bulk-delete`,
          owner.token,
          { messages: [big, '1'] },
          { messages: { 0: { _errors: notSnowflake(big) } } },
        ],
        [
          'POST',
          `/channels/${channel}/invites`,
          owner.token,
          { target_user_id: big, target_type: 1 },
          { target_user_id: { _errors: notSnowflake(big) } },
        ],
        [
          'POST',
          `/channels/${channel}/messages`,
          owner.token,
          { content: 'x', allowed_mentions: { users: [big] } },
          { allowed_mentions: { users: { 0: { _errors: notSnowflake(big) } } } },
        ],
      ]
      for (const [method, path, token, body, errors] of cases) {
        const r = await api(method, path, { token, body })
        expect([method, path, r.status, r.body.code, r.body.errors]).toEqual([method, path, 400, 50035, errors])
      }
    }
  })

  test('every documented route: each id slot of the path, the query and the body; no 5xx, no ERROR line', async () => {
    const { url } = await server()
    const doc = (await (await fetch(`${url}/api/docs/json`)).json()) as {
      paths: Record<string, Record<string, Operation>>
    }
    const failures: string[] = []
    const walked = new Set<string>()
    let requests = 0
    const statuses: Record<number, number> = {}
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [lower, op] of Object.entries(ops)) {
        const method = lower.toUpperCase()
        const slots = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
        const queries = (op.parameters ?? []).filter((p) => p.in === 'query' && isIdQuery(p.name)).map((p) => p.name)
        const bodySchema = op.requestBody?.content?.['application/json']?.schema
        const plainBody = bodySchema ? fill(bodySchema) : undefined
        // What to send: [where the big id is, path, query, body].
        const cases: [string, string, string, unknown][] = []
        for (const big of BIG) {
          for (const [i, slot] of slots.entries()) {
            if (!isIdSlot(slot)) continue
            let k = 0
            const filled = path.replace(/\{(\w+)\}/g, (_, name) => (k++ === i ? big : real(name, path)))
            cases.push([`path ${slot}`, filled, '', plainBody])
          }
          const realPath = path.replace(/\{(\w+)\}/g, (_, name) => real(name, path))
          for (const name of queries) cases.push([`query ${name}`, realPath, `?${name}=${big}`, plainBody])
          if (bodySchema && hasSnowflake(bodySchema)) cases.push(['body', realPath, '', fill(bodySchema, big)])
        }
        if (cases.length) walked.add(`${method} ${path}`)
        for (const [where, target, query, body] of cases) {
          for (const token of tokens(op)) {
            resetWorld()
            requests += 1
            const r = await api(method, `${target}${query}`, {
              token,
              body: method === 'GET' || method === 'DELETE' ? undefined : body,
              rateLimited: 'return',
            })
            statuses[r.status] = (statuses[r.status] ?? 0) + 1
            if (r.status >= 500)
              failures.push(`${method} ${path} (${where} ${target}${query}): ${r.status} ${JSON.stringify(r.body)}`)
          }
        }
      }
    }
    expect(failures).toEqual([])
    expect(errors).toEqual([])
    // The requests got past the caller checks to the handlers: every caller was let in, most ids named nothing.
    expect([statuses[401] ?? 0, statuses[429] ?? 0]).toEqual([0, 0])
    expect(statuses[404]).toBeGreaterThan(300)
    expect(statuses[200]).toBeGreaterThan(30)
    // The routes whose ids reach a page's ORDER BY, and a route of every domain, are among those walked.
    for (const route of [
      'GET /api/v9/lobbies/{lobbyId}/messages',
      'GET /api/v9/channels/{channelId}/messages',
      'GET /api/v9/guilds/{guildId}/members',
      'GET /api/v9/guilds/{guildId}/bans',
      'GET /api/v9/channels/{channelId}/messages/{messageId}/reactions/{emoji}',
      'GET /api/v9/users/@me/guilds',
      'PATCH /api/v9/guilds/{guildId}/members/{userId}',
      'POST /api/v9/lobbies/{lobbyId}/members/bulk',
      'GET /api/v9/applications/{applicationId}/guilds/{guildId}/commands/{commandId}',
      'DELETE /api/v9/oauth2/tokens/{tokenId}',
      'GET /api/v9/oauth2/authorize',
      'GET /api/v9/users/{userId}',
      'PATCH /api/v9/users/@me/mfa/webauthn/credentials/{id}',
    ])
      expect(walked).toContain(route)
    console.log(`snowflake bounds: ${walked.size} routes, ${requests} requests`, JSON.stringify(statuses))
  }, 120_000)
})
