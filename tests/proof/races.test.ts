// The same request many times at once, where a row is created once (unique indexes) or a member added once: every
// answer a success or a documented 4xx, never a 500, and one row — on SQLite and, in its pass, on PostgreSQL, whose
// READ COMMITTED lets parallel transactions meet at the unique index rather than behind one write mutex.
import { afterEach, describe, expect, test } from 'bun:test'
import { makeGuild } from '../guilds/helpers'
import { setup } from '../lobbies/helpers'
import { api, makeUser, resetWorld } from '../helpers'

afterEach(resetWorld)

const N = 20

describe('parallel creation', () => {
  test('PUT /lobbies with one secret by one player, 20 at once: one lobby, one member', async () => {
    const { players } = await setup(1)
    const all = await Promise.all(
      Array.from({ length: N }, () => api('PUT', '/lobbies', { token: players[0].bearer, body: { secret: 'same' } })),
    )
    expect(all.map((r) => r.status)).toEqual(Array(N).fill(200))
    expect(new Set(all.map((r) => r.body.id)).size).toBe(1)
    const last = await api('PUT', '/lobbies', { token: players[0].bearer, body: { secret: 'same' } })
    expect(last.body.members.map((m: { id: string }) => m.id)).toEqual([players[0].id])
  })

  test('PUT /lobbies with one secret by 10 players at once: one lobby holding all 10', async () => {
    const { players } = await setup(10)
    const all = await Promise.all(
      players.map((p) => api('PUT', '/lobbies', { token: p.bearer, body: { secret: 'party' } })),
    )
    expect(all.map((r) => r.status)).toEqual(Array(10).fill(200))
    expect(new Set(all.map((r) => r.body.id)).size).toBe(1)
    const last = await api('PUT', '/lobbies', { token: players[0].bearer, body: { secret: 'party' } })
    expect(last.body.members.map((m: { id: string }) => m.id).sort()).toEqual(players.map((p) => p.id).sort())
  })

  test('PUT /lobbies/{id}/members/{user} for one user, 20 at once: one member', async () => {
    const { bot, players } = await setup(1)
    const lobby = (await api('POST', '/lobbies', { token: bot, body: {} })).body
    const all = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        api('PUT', `/lobbies/${lobby.id}/members/${players[0].id}`, { token: bot, body: { metadata: { n: `${i}` } } }),
      ),
    )
    expect(all.map((r) => r.status)).toEqual(Array(N).fill(200))
    const got = await api('GET', `/lobbies/${lobby.id}`, { token: bot })
    expect(got.body.members.map((m: { id: string }) => m.id)).toEqual([players[0].id])
  })

  test('one invite used by one user, 20 at once: one member, one use counted; a guild message reacted 20 times: one', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const invite = await api('POST', `/channels/${channelId}/invites`, { token: owner.token, body: { max_age: 0 } })
    const user = await makeUser()
    const joins = await Promise.all(
      Array.from({ length: N }, () => api('POST', `/invites/${invite.body.code}`, { token: user.token })),
    )
    expect(joins.map((r) => r.status)).toEqual(Array(N).fill(200))
    const members = await api('GET', `/guilds/${guild.id}/members?limit=10`, { token: owner.token })
    expect(members.body.map((m: { user: { id: string } }) => m.user.id).sort()).toEqual([owner.id, user.id].sort())
    const listed = await api('GET', `/channels/${channelId}/invites`, { token: owner.token })
    expect(listed.body.find((i: { code: string }) => i.code === invite.body.code).uses).toBe(1)

    const message = await api('POST', `/channels/${channelId}/messages`, {
      token: owner.token,
      body: { content: 'hi' },
    })
    const thumbs = encodeURIComponent('👍')
    const reacts = await Promise.all(
      Array.from({ length: N }, () =>
        api('PUT', `/channels/${channelId}/messages/${message.body.id}/reactions/${thumbs}/@me`, { token: user.token }),
      ),
    )
    expect(reacts.map((r) => r.status)).toEqual(Array(N).fill(204))
    const got = await api('GET', `/channels/${channelId}/messages/${message.body.id}`, { token: owner.token })
    expect(got.body.reactions).toMatchObject([{ count: 1, me: false }])
  })
})
