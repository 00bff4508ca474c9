// Counts and single-use things hold on PostgreSQL with several servers on one database (READ COMMITTED): three
// connection pools (this process's server and two more processes) race for the last places of a lobby, and for one
// OAuth2 code. On SQLite there is one writer at a time: these races cannot happen there, and the file is skipped.
import { describe, expect, test } from 'bun:test'
import { snowflake } from '../../src/core/snowflake'
import { clock } from '../../src/core/clock'
import { api, onPostgres, server } from '../helpers'
import { authorizeCode, REDIRECT } from '../oauth2/helpers'
import { freshEnv, serve, type Served } from '../ops/process-helpers'
import { setup } from '../lobbies/helpers'
import { rawBatch, rawDatabaseUrl, rawRow } from './raw'

/** The URLs of three servers on the test database: this process's and two children's. */
async function threeServers(): Promise<{ urls: string[]; stop: () => Promise<void> }> {
  const own = await server()
  const { env } = freshEnv({ DATABASE_URL: rawDatabaseUrl()!, LOG_LEVEL: 'warn' })
  const children: Served[] = await Promise.all([serve(env), serve(env)])
  return {
    urls: [own.url, ...children.map((c) => c.url)],
    stop: async () => {
      await Promise.all(children.map((c) => c.stop()))
    },
  }
}

describe.skipIf(!onPostgres)('on PostgreSQL, three servers on one database', () => {
  test('30 parallel joins for the last 3 places of a lobby (1000 members at most): exactly 3 join, in each of 3 rounds', async () => {
    const { bot, players } = await setup(30)
    const { urls, stop } = await threeServers()
    try {
      for (let round = 0; round < 3; round++) {
        const secret = `race-${round}`
        const lobby = (await api('PUT', '/lobbies', { token: bot, body: { secret } })).body
        const fillers = Array.from({ length: 997 }, () => snowflake())
        await rawBatch(
          'INSERT INTO users (id, username, created_at) VALUES (?, ?, ?)',
          fillers.map((id) => [id, `fill_${id}`, clock.now()]),
        )
        await rawBatch(
          'INSERT INTO lobby_members (lobby_id, user_id, application_id, flags, joined_at) VALUES (?, ?, ?, 0, ?)',
          fillers.map((id) => [lobby.id, id, lobby.application_id, clock.now()]),
        )
        const answers = await Promise.all(
          players.map((p, i) =>
            fetch(`${urls[i % 3]}/api/v9/lobbies`, {
              method: 'PUT',
              headers: { authorization: p.bearer, 'content-type': 'application/json' },
              body: JSON.stringify({ secret }),
            }).then(async (r) => ({ status: r.status, body: (await r.json()) as any })),
          ),
        )
        const joined = answers.filter((a) => a.status === 200)
        expect(joined).toHaveLength(3)
        for (const a of answers.filter((a) => a.status !== 200)) expect(a).toMatchObject({ status: 400 })
        const row = await rawRow<{ n: number }>('SELECT count(*) AS n FROM lobby_members WHERE lobby_id = ?', lobby.id)
        expect(row!.n).toBe(1000)
      }
    } finally {
      await stop()
    }
  }, 120_000)

  test('one OAuth2 code redeemed 50 times at once over the three servers: exactly one token', async () => {
    const { app, players } = await setup(1)
    const { urls, stop } = await threeServers()
    try {
      const code = await authorizeCode(players[0], app)
      const basic = `Basic ${Buffer.from(`${app.id}:${app.client_secret}`).toString('base64')}`
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          fetch(`${urls[i % 3]}/api/v10/oauth2/token`, {
            method: 'POST',
            headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }).toString(),
          }).then((r) => r.status),
        ),
      )
      expect(answers.filter((s) => s === 200)).toHaveLength(1)
      expect(answers.filter((s) => s !== 200).every((s) => s === 400)).toBe(true)
    } finally {
      await stop()
    }
  }, 60_000)

  test('a lobby created by PUT with one new secret from 20 players at once over three servers: one lobby, all in it', async () => {
    const { players } = await setup(20)
    const { urls, stop } = await threeServers()
    try {
      const answers = await Promise.all(
        players.map((p, i) =>
          fetch(`${urls[i % 3]}/api/v9/lobbies`, {
            method: 'PUT',
            headers: { authorization: p.bearer, 'content-type': 'application/json' },
            body: JSON.stringify({ secret: 'one-new-secret' }),
          }).then(async (r) => ({ status: r.status, body: (await r.json()) as any })),
        ),
      )
      expect(answers.map((a) => a.status)).toEqual(players.map(() => 200))
      expect(new Set(answers.map((a) => a.body.id)).size).toBe(1)
      const lobby = answers[0].body.id
      const row = await rawRow<{ n: number }>('SELECT count(*) AS n FROM lobby_members WHERE lobby_id = ?', lobby)
      expect(row!.n).toBe(20)
    } finally {
      await stop()
    }
  }, 60_000)
})
