// GET /experiments and READY: arrays element by element for a known user ID, fingerprints (new, sent back, not
// honoured, the per-IP allowance by moving the clock, ended by login, taken by registration), guild experiments,
// the DEVELOPER_PORTAL platform.
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { GatewayClient } from '../gateway-client'
import { api, makeUser, resetWorld } from '../helpers'
import { registerUser } from '../auth/helpers'
import { load, refUserArray, userWithId, type Def } from './helpers'

const ID = '1084179945133187083'
const ALL = (bucket: number) => [{ ranges: [{ bucket, rollout: [{ s: 0, e: 9999 }] }] }]

// Positions of ID: 2025-01_holdout 5347, 2025-03_feature 4286, 2025-04_aa 1819, 2025-05_override 5641,
// custom_key (2025-06_split's hash_key) 7047, 2025-06_nobody 4231, 2025-07_portal 2883.
const FILE: Def[] = [
  { name: '2025-01_holdout', kind: 'user', revision: 1, populations: ALL(0) },
  {
    name: '2025-03_feature',
    kind: 'user',
    revision: 3,
    trigger_debugging: true,
    holdout: { name: '2025-01_holdout', bucket: 0 },
    populations: ALL(1),
  },
  { name: '2025-04_aa', kind: 'user', revision: 1, aa_mode: true, populations: ALL(2) },
  { name: '2025-05_override', kind: 'user', revision: 2, populations: ALL(1), overrides: [{ b: 5, k: [ID] }] },
  {
    name: '2025-06_split',
    kind: 'user',
    revision: 7,
    hash_key: 'custom_key',
    populations: [
      { ranges: [{ bucket: 3, rollout: [{ s: 0, e: 7046 }] }] },
      {
        ranges: [
          { bucket: 1, rollout: [{ s: 0, e: 7047 }] },
          { bucket: 2, rollout: [{ s: 7048, e: 9999 }] },
        ],
      },
    ],
  },
  {
    name: '2025-06_nobody',
    kind: 'user',
    revision: 1,
    populations: [
      {
        ranges: [
          { bucket: 1, rollout: [{ s: 0, e: 4230 }] },
          { bucket: 2, rollout: [{ s: 4232, e: 9999 }] },
        ],
      },
    ],
  },
  { name: '2025-07_portal', kind: 'user', revision: 1, platform: 'DEVELOPER_PORTAL', populations: ALL(1) },
  {
    name: '2025-02_servers',
    kind: 'guild',
    revision: 4,
    populations: [
      {
        ranges: [{ bucket: 1, rollout: [{ s: 0, e: 9999 }] }],
        filters: { guild_has_feature: { guild_features: ['COMMUNITY'] } },
      },
    ],
  },
]

// Built by hand from the spec's table: hash, revision, bucket, override, population, position, aa_mode,
// trigger_debugging, then holdout name, revision and bucket only where the holdout disabled the experiment.
const EXPECTED = [
  [497172941, 1, 0, -1, 0, 5347, 0, 0],
  [2861553880, 3, -1, -1, 0, 4286, 0, 1, '2025-01_holdout', 1, 0],
  [1829863932, 1, -1, -1, 0, 1819, 1, 0],
  [981251198, 2, 5, 0, -1, 5641, 0, 0],
  [4088425115, 7, 1, -1, 1, 7047, 0, 0],
  [16687471, 1, -1, -1, -1, 4231, 0, 0],
]
const PORTAL = [3856268095, 1, 1, -1, 0, 2883, 0, 0]
const SERVERS = [
  3308995832,
  '2025-02_servers',
  4,
  [[[[1, [{ s: 0, e: 10000 }]]], [[1604612045, [[1183251248, ['COMMUNITY']]]]]]],
  [],
  [],
  null,
  null,
  0,
  0,
]

let known: { id: string; token: string }

beforeAll(async () => {
  known = await userWithId(ID)
})

beforeEach(resetWorld)
afterEach(resetWorld)

function expectArrays(actual: unknown[][], expected: unknown[][]) {
  expect(actual).toHaveLength(expected.length)
  actual.forEach((array, i) => {
    expect(array).toHaveLength(expected[i].length)
    array.forEach((element, j) => expect([i, j, element]).toEqual([i, j, expected[i][j]]))
  })
}

describe('with a user token', () => {
  test("the user's assignments, element by element", async () => {
    await load(FILE)
    const r = await api('GET', '/experiments', { token: known.token })
    expect(r.status).toBe(200)
    expect(Object.keys(r.body)).toEqual(['assignments'])
    expectArrays(r.body.assignments, EXPECTED)
  })

  test('with_guild_experiments=true adds the server experiments; false or absent leaves them out', async () => {
    await load(FILE)
    const r = await api('GET', '/experiments?with_guild_experiments=true', { token: known.token })
    expectArrays(r.body.assignments, EXPECTED)
    expectArrays(r.body.guild_experiments, [SERVERS])
    expect(
      (await api('GET', '/experiments?with_guild_experiments=false', { token: known.token })).body.guild_experiments,
    ).toBeUndefined()
    const bad = await api('GET', '/experiments?with_guild_experiments=maybe', { token: known.token })
    expect(bad.status).toBe(400)
    expect(bad.body).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        with_guild_experiments: {
          _errors: [{ code: 'BOOLEAN_TYPE_CONVERT', message: 'Must be either true or false.' }],
        },
      },
    })
  })

  test('platform=DEVELOPER_PORTAL adds the experiments tagged for it, and needs authentication', async () => {
    await load(FILE)
    const r = await api('GET', '/experiments?platform=DEVELOPER_PORTAL&with_guild_experiments=true', {
      token: known.token,
    })
    expect(r.status).toBe(200)
    expectArrays(r.body.assignments, [...EXPECTED, PORTAL])
    const anonymous = await api('GET', '/experiments?platform=DEVELOPER_PORTAL')
    expect(anonymous.status).toBe(401)
    expect(anonymous.body.code).toBe(0)
    const fresh = await api('GET', '/experiments')
    expect(
      (
        await api('GET', '/experiments?platform=DEVELOPER_PORTAL', {
          headers: { 'x-fingerprint': fresh.body.fingerprint },
        })
      ).status,
    ).toBe(401)
    const bad = await api('GET', '/experiments?platform=IOS', { token: known.token })
    expect(bad.status).toBe(400)
    expect(bad.body.errors.platform._errors[0].code).toBe('BASE_TYPE_CHOICES')
  })

  test('a token that does not resolve: 401, and no fingerprint is made', async () => {
    const r = await api('GET', '/experiments', { token: 'not-a-token' })
    expect(r.status).toBe(401)
    expect(r.body.fingerprint).toBeUndefined()
  })

  test('a token wins over X-Fingerprint', async () => {
    await load(FILE)
    const fresh = await api('GET', '/experiments')
    const r = await api('GET', '/experiments', {
      token: known.token,
      headers: { 'x-fingerprint': fresh.body.fingerprint },
    })
    expectArrays(r.body.assignments, EXPECTED)
  })
})

describe('fingerprints', () => {
  test('no token and no X-Fingerprint: a new fingerprint and its assignments; sent back, the same assignments', async () => {
    await load(FILE)
    const r = await api('GET', '/experiments?with_guild_experiments=true')
    expect(r.status).toBe(200)
    expect(r.body.fingerprint).toMatch(/^\d{17,20}\.[A-Za-z0-9_-]+$/)
    const id = r.body.fingerprint.split('.')[0]
    expect(r.body.assignments).toEqual(
      FILE.filter((d) => d.kind === 'user' && !d.platform).map((d) => refUserArray(FILE, d.name, id)),
    )
    expectArrays(r.body.guild_experiments, [SERVERS])
    const again = await api('GET', '/experiments', { headers: { 'x-fingerprint': r.body.fingerprint } })
    expect(Object.keys(again.body)).toEqual(['assignments'])
    expect(again.body.assignments).toEqual(r.body.assignments)
  })

  test('a forged or unknown fingerprint is not honoured: no assignments, and no new fingerprint', async () => {
    await load(FILE)
    const { fingerprint } = (await api('GET', '/experiments')).body
    const [id, mac] = fingerprint.split('.')
    for (const forged of [
      `${id}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      `${BigInt(id) + 1n}.${mac}`,
      'garbage',
      'x'.repeat(65),
    ]) {
      const r = await api('GET', '/experiments', { headers: { 'x-fingerprint': forged } })
      expect(r.status).toBe(200)
      expect(r.body).toEqual({ assignments: [] })
    }
  })

  test('3 honoured per 2 minutes per IP: the 4th is returned but not honoured, until the clock moves on', async () => {
    await load(FILE)
    const honoured = async (fingerprint: string) =>
      (await api('GET', '/experiments', { headers: { 'x-fingerprint': fingerprint } })).body.assignments.length > 0
    const made: { fingerprint: string; assignments: unknown[] }[] = []
    for (let i = 0; i < 4; i++) made.push((await api('GET', '/experiments')).body)
    for (const m of made) expect(m.fingerprint).toMatch(/^\d+\./)
    expect(made.map((m) => m.assignments.length)).toEqual([6, 6, 6, 0])
    expect(await Promise.all(made.map((m) => honoured(m.fingerprint)))).toEqual([true, true, true, false])
    // Not honoured at registration either: the account does not get its ID.
    const reg = await registerUser({ fingerprint: made[3].fingerprint })
    expect((await api('GET', '/users/@me', { token: reg.r.body.token })).body.id).not.toBe(
      made[3].fingerprint.split('.')[0],
    )
    clock.advance(60_000)
    expect((await api('GET', '/experiments')).body.assignments).toEqual([])
    clock.advance(60_000)
    const later = (await api('GET', '/experiments')).body
    expect(later.assignments).toHaveLength(6)
    expect(await honoured(later.fingerprint)).toBe(true)
  })

  test('registration with a fingerprint: the account gets its ID and keeps its assignments', async () => {
    await load(FILE)
    const { fingerprint, assignments } = (await api('GET', '/experiments')).body
    const { r } = await registerUser({}, { 'x-fingerprint': fingerprint })
    expect(r.status).toBe(200)
    const mine = await api('GET', '/experiments', { token: r.body.token })
    expect(mine.body.assignments).toEqual(assignments)
    // Taken: no longer honoured on its own.
    expect((await api('GET', '/experiments', { headers: { 'x-fingerprint': fingerprint } })).body.assignments).toEqual(
      [],
    )
  })

  test('honoured until login: a login carrying it (header or body) ends it', async () => {
    await load(FILE)
    for (const where of ['header', 'body'] as const) {
      const user = await makeUser()
      const { fingerprint } = (await api('GET', '/experiments')).body
      const login = await api('POST', '/auth/login', {
        body: { login: user.email, password: user.password, ...(where === 'body' ? { fingerprint } : {}) },
        headers: where === 'header' ? { 'x-fingerprint': fingerprint } : {},
      })
      expect(login.status).toBe(200)
      expect(login.body.token).toBeString()
      expect(
        (await api('GET', '/experiments', { headers: { 'x-fingerprint': fingerprint } })).body.assignments,
      ).toEqual([])
      const reg = await registerUser({ fingerprint })
      expect((await api('GET', '/users/@me', { token: reg.r.body.token })).body.id).not.toBe(fingerprint.split('.')[0])
    }
  })

  test('a failed login leaves the fingerprint honoured', async () => {
    await load(FILE)
    const user = await makeUser()
    const { fingerprint } = (await api('GET', '/experiments')).body
    const login = await api('POST', '/auth/login', {
      body: { login: user.email, password: 'wrong password!' },
      headers: { 'x-fingerprint': fingerprint },
    })
    expect(login.status).toBe(400)
    expect(
      (await api('GET', '/experiments', { headers: { 'x-fingerprint': fingerprint } })).body.assignments,
    ).toHaveLength(6)
  })
})

describe('READY', () => {
  test("carries the user's assignments and the server experiments", async () => {
    await load(FILE)
    const { client, ready } = await GatewayClient.identified(known.token)
    try {
      expectArrays(ready.experiments, EXPECTED)
      expectArrays(ready.guild_experiments, [SERVERS])
    } finally {
      client.close()
    }
  })

  test('follows a new load', async () => {
    await load([FILE[0]])
    const first = await GatewayClient.identified(known.token)
    first.client.close()
    expectArrays(first.ready.experiments, [EXPECTED[0]])
    expect(first.ready.guild_experiments).toEqual([])
    await load(FILE)
    const second = await GatewayClient.identified(known.token)
    second.client.close()
    expectArrays(second.ready.experiments, EXPECTED)
  })
})
