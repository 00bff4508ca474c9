// Every limit of the lobby bodies at its edge, on every route that takes the field: the limit passes, one past it is
// 400 50035 with Discord's code and message at the field's path (the schema carries the rule: lobbies/schemas.ts).
import { afterEach, expect, test } from 'bun:test'
import {
  IDLE_TIMEOUT_MAX,
  IDLE_TIMEOUT_MIN,
  MAX_CONTENT_CHARS,
  MAX_MEMBERS_PER_REQUEST,
  MAX_METADATA_CHARS,
  MAX_METADATA_KEYS,
  MAX_SECRET_CHARS,
} from '../../src/lobbies/limits'
import { api, makeUser, resetWorld } from '../helpers'
import { createLobby, metadata, setup } from './helpers'

afterEach(resetWorld)

type Case = [what: string, passes: unknown, fails: unknown, errors: Record<string, unknown>]
const at = (code: string, message: string) => ({ _errors: [{ code, message }] })
const tooLong = (n: number) => at('BASE_TYPE_MAX_LENGTH', `Must be ${n} or fewer in length.`)
const min = (n: number) => at('NUMBER_TYPE_MIN', `int value should be greater than or equal to ${n}.`)
const max = (n: number) => at('NUMBER_TYPE_MAX', `int value should be less than or equal to ${n}.`)
const LONG_KEY = metadata(1, MAX_METADATA_CHARS + 1, 1)

/** Cases for a metadata field: key count, key length, value length. */
function metadataCases(field: string, wrap = (m: unknown): unknown => ({ [field]: m })): Case[] {
  const [key] = Object.keys(metadata(1, 8, MAX_METADATA_CHARS + 1))
  return [
    [
      `${field} keys`,
      wrap(metadata(MAX_METADATA_KEYS)),
      wrap(metadata(MAX_METADATA_KEYS + 1)),
      { [field]: tooLong(25) },
    ],
    [
      `${field} key length`,
      wrap(metadata(1, MAX_METADATA_CHARS, 1)),
      wrap(LONG_KEY),
      { [field]: at('BASE_TYPE_MAX_LENGTH', 'Keys must be 1024 or fewer in length.') },
    ],
    [
      `${field} value length`,
      wrap(metadata(1, 8, MAX_METADATA_CHARS)),
      wrap(metadata(1, 8, MAX_METADATA_CHARS + 1)),
      { [field]: { [key]: tooLong(MAX_METADATA_CHARS) } },
    ],
  ]
}

function intCases(field: string, low: number, high: number, wrap = (v: unknown): unknown => ({ [field]: v })): Case[] {
  return [
    [`${field} minimum`, wrap(low), wrap(low - 1), { [field]: min(low) }],
    [`${field} maximum`, wrap(high), wrap(high + 1), { [field]: max(high) }],
  ]
}

async function check(method: string, path: string, token: string, cases: Case[], ok = [200, 201, 204]) {
  for (const [what, passes, fails, errors] of cases) {
    const good = await api(method, path, { token, body: passes })
    expect({ what, status: good.status, body: ok.includes(good.status) ? null : good.body }).toEqual({
      what,
      status: good.status,
      body: null,
    })
    const bad = await api(method, path, { token, body: fails })
    expect({ what, status: bad.status, body: bad.body }).toEqual({
      what,
      status: 400,
      body: { code: 50035, message: 'Invalid Form Body', errors },
    })
  }
}

const lobbyCases: Case[] = [
  ...metadataCases('metadata'),
  ...intCases('idle_timeout_seconds', IDLE_TIMEOUT_MIN, IDLE_TIMEOUT_MAX),
  ...intCases('flags', 0, 1),
]

test('POST /lobbies and PATCH /lobbies/{id}: metadata, idle timeout, flags, members and their fields', async () => {
  const { bot } = await setup(0)
  const users = await Promise.all(Array.from({ length: MAX_MEMBERS_PER_REQUEST }, () => makeUser()))
  const member = (fields: Record<string, unknown>) => ({ members: [{ id: users[0].id, ...fields }] })
  const many = (n: number) => ({ members: Array.from({ length: n }, (_, i) => ({ id: users[i]?.id ?? '1' })) })
  const memberCases: Case[] = [
    ['members', many(MAX_MEMBERS_PER_REQUEST), many(MAX_MEMBERS_PER_REQUEST + 1), { members: tooLong(25) }],
    ...metadataCases('metadata', (m) => member({ metadata: m })).map(
      ([what, passes, fails, errors]): Case => [`members.0.${what}`, passes, fails, { members: { 0: errors } }],
    ),
    ...intCases('flags', 0, 1, (v) => member({ flags: v })).map(
      ([what, passes, fails, errors]): Case => [`members.0.${what}`, passes, fails, { members: { 0: errors } }],
    ),
  ]
  await check('POST', '/lobbies', bot, [...lobbyCases, ...memberCases])
  const lobby = await createLobby(bot)
  await check('PATCH', `/lobbies/${lobby.id}`, bot, [...lobbyCases, ...memberCases])
})

test('PUT /lobbies: secret, both metadata maps, idle timeout, flags', async () => {
  const { players } = await setup(1)
  const secret = (s: unknown) => ({ secret: s })
  const cases: Case[] = [
    [
      'secret length',
      secret('s'.repeat(MAX_SECRET_CHARS)),
      secret('s'.repeat(MAX_SECRET_CHARS + 1)),
      { secret: at('BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 250 in length.') },
    ],
    [
      'secret not empty',
      secret('s'),
      secret(''),
      { secret: at('BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 250 in length.') },
    ],
    ...[...metadataCases('lobby_metadata'), ...metadataCases('member_metadata'), ...lobbyCases.slice(3)].map(
      ([what, passes, fails, errors]): Case => [
        what,
        { secret: 's', ...(passes as object) },
        { secret: 's', ...(fails as object) },
        errors,
      ],
    ),
  ]
  await check('PUT', '/lobbies', players[0].bearer, cases)
})

test('PUT /lobbies/{id}/members/{userId} and bulk: metadata, flags, item count', async () => {
  const { bot, players } = await setup(1)
  const lobby = await createLobby(bot)
  const memberCases = [...metadataCases('metadata'), ...intCases('flags', 0, 1)]
  await check('PUT', `/lobbies/${lobby.id}/members/${players[0].id}`, bot, memberCases)
  const item = (fields: object) => ({ id: players[0].id, ...fields })
  await check('POST', `/lobbies/${lobby.id}/members/bulk`, bot, [
    [
      'items',
      Array.from({ length: MAX_MEMBERS_PER_REQUEST }, () => item({})),
      Array.from({ length: MAX_MEMBERS_PER_REQUEST + 1 }, () => item({})),
      at('BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 25 in length.') as Record<string, unknown>,
    ],
    ['at least one item', [item({})], [], at('BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 25 in length.')],
    ...memberCases.map(
      ([what, passes, fails, errors]): Case => [what, [item(passes as object)], [item(fails as object)], { 0: errors }],
    ),
  ])
})

test('POST /lobbies/{id}/messages: content, metadata, flags', async () => {
  const { bot, players } = await setup(1)
  const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
  const message = (fields: object) => ({ content: 'gg', ...fields })
  await check('POST', `/lobbies/${lobby.id}/messages`, players[0].bearer, [
    [
      'content length',
      message({ content: 'x'.repeat(MAX_CONTENT_CHARS) }),
      message({ content: 'x'.repeat(MAX_CONTENT_CHARS + 1) }),
      { content: at('BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 4000 in length.') },
    ],
    [
      'content not empty',
      message({ content: 'x' }),
      message({ content: '' }),
      {
        content: at('BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 4000 in length.'),
      },
    ],
    ...[...metadataCases('metadata'), ...intCases('flags', 0, 2 ** 31 - 1)].map(
      ([what, passes, fails, errors]): Case => [what, message(passes as object), message(fails as object), errors],
    ),
  ])
})

test('PATCH /lobbies/{id}/channel-linking: channel_id is a snowflake (below 2^63)', async () => {
  const { bot } = await setup(0)
  const lobby = await createLobby(bot)
  const link = (channelId: unknown) =>
    api('PATCH', `/lobbies/${lobby.id}/channel-linking`, { token: bot, body: { channel_id: channelId } })
  // The largest snowflake (2^63 - 1, PostgreSQL's bigint) passes the form (and names no channel of this server); one
  // more is not a snowflake.
  const largest = await link('9223372036854775807')
  expect(largest.body.errors).toBeUndefined()
  expect([largest.status, largest.body.code]).not.toEqual([400, 50035])
  for (const value of [
    '9223372036854775808',
    '18446744073709551615',
    '18446744073709551616',
    '123456789012345678901',
    'abc',
    5,
  ])
    expect((await link(value)).body).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: { channel_id: at('NUMBER_TYPE_COERCE', `Value "${value}" is not snowflake.`) },
    })
})
