// The locks an outbox entry takes before its transaction's COMMIT (src/cluster/outbox.ts keysOf, reasons at its top):
// a subscription change locks its topics (ordered against their dispatches), never its users, so a guild change that
// re-follows thousands of members takes as many locks as the guild has topics; a lobby's dispatch locks the lobby's
// topic, not its application's.
import { describe, expect, test } from 'bun:test'
import type { Draft } from '../../src/cluster/log'
import { keysOf } from '../../src/cluster/outbox'

const guildActivity = { kind: 'guild-activity' } as const
const members = (n: number) => Array.from({ length: n }, (_, i) => `${9_000_000_000_000_000_000n + BigInt(i)}`)

describe('the lock keys of an outbox entry', () => {
  test('a page of a guild’s members subscribed or unsubscribed: its topics, however many users it names', () => {
    const topicList = ['guild:1', 'channel:2', 'channel:3']
    for (const userIds of [members(1), members(1000)]) {
      expect(keysOf({ kind: 'subscribe-users', userIds, topics: topicList, audience: guildActivity })).toEqual(
        topicList,
      )
      expect(keysOf({ kind: 'unsubscribe-users', userIds, topics: ['channel:2'] })).toEqual(['channel:2'])
    }
  })

  test('one user subscribed or unsubscribed: the topic, the same key as the topic’s dispatches', () => {
    const message: Draft = { kind: 'dispatch', topics: ['channel:2'], type: 'MESSAGE_CREATE', data: '{}' }
    expect(keysOf(message)).toEqual(['channel:2'])
    expect(keysOf({ kind: 'subscribe-user', userId: '7', topic: 'channel:2', audience: guildActivity })).toEqual([
      'channel:2',
    ])
    expect(keysOf({ kind: 'unsubscribe-user', userId: '7', topic: 'channel:2' })).toEqual(['channel:2'])
  })

  test('a lobby’s dispatch: the lobby’s topic, not its application’s (every lobby of the app would share it)', () => {
    const lobbyEvent: Draft = {
      kind: 'dispatch',
      topics: ['lobby:5', 'app:9'],
      type: 'LOBBY_MESSAGE_CREATE',
      data: '{}',
    }
    expect(keysOf(lobbyEvent)).toEqual(['lobby:5'])
    // One to the application alone (none today) keeps its order.
    expect(keysOf({ ...lobbyEvent, topics: ['app:9'] })).toEqual(['app:9'])
  })

  test('what is meant for one user’s sessions keeps the user’s key', () => {
    expect(
      keysOf({ kind: 'user-dispatch', userId: '7', audience: guildActivity, type: 'GUILD_CREATE', data: '{}' }),
    ).toEqual(['user:7'])
    expect(keysOf({ kind: 'close-user', userId: '7', code: 4004 })).toEqual(['user:7'])
    expect(keysOf({ kind: 'close-grants', userId: '7', which: { familyId: 'f' }, code: 4004 })).toEqual(['user:7'])
  })
})
