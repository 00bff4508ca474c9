// A Resume takes a session only with the credential that identified it (security issue 40, finding 2): the same user
// is not enough. Another application's Bearer token of the user, another grant of the same application, a refresh of
// the grant that lost scopes, another auth session of the user, another application's bot, a user token for an OAuth2
// session and the reverse: each gets op 9 with d:false, as Discord answers, and none of what the session missed; the
// session stays resumable by its own credential. (Several nodes: tests/cluster/resume-credentials.test.ts.)
import { afterEach, describe, expect, test } from 'bun:test'
import { createSession } from '../../src/accounts/sessions'
import { events, topics } from '../../src/gateway/bus'
import { type GatewayClient, tracked } from '../gateway-client'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { grantTokens, tokenRequest } from '../oauth2/helpers'

const sockets = tracked()
afterEach(() => {
  sockets.closeAll()
  resetWorld()
})

const SCOPES = 'identify gateway.connect lobbies.write'

/** A lobby of `app` with `user` as member, and a way to post to it as the application's bot. */
async function lobbyOf(app: { bot_token: string }, user: { id: string }) {
  const bot = `Bot ${app.bot_token}`
  const made = await api('POST', '/lobbies', { token: bot, body: { members: [{ id: user.id }] } })
  expect(made.status).toBe(201)
  return async (content: string) => {
    const sent = await api('POST', `/lobbies/${made.body.id}/messages`, { token: bot, body: { content } })
    expect(sent.status).toBe(201)
  }
}

/** Identify with `token`, see one lobby message, drop the socket (resumable), then post one the session misses. */
async function droppedWithMissed(token: string, post: (content: string) => Promise<void>) {
  const c = await sockets.connect()
  const ready = await c.identify(token)
  await post('seen')
  await c.waitFor((f) => f.t === 'LOBBY_MESSAGE_CREATE' && f.d.content === 'seen')
  const seq = c.lastSeq!
  c.close(4000)
  await c.waitForClose()
  await post('missed')
  return { sessionId: ready.session_id as string, seq }
}

async function resume(token: string, sessionId: string, seq: number): Promise<GatewayClient> {
  const r = await sockets.connect()
  r.send(6, { token, session_id: sessionId, seq })
  await r.waitFor((f) => f.t === 'RESUMED' || f.op === 9)
  return r
}

/** Refused as Discord refuses: op 9 d:false, nothing replayed, nothing resumed. */
function expectRefused(r: GatewayClient) {
  expect(r.frames.find((f) => f.op === 9)).toMatchObject({ op: 9, d: false })
  expect(r.dispatches('LOBBY_MESSAGE_CREATE')).toEqual([])
  expect(r.dispatches('RESUMED')).toEqual([])
}

/** Resumed by its own credential: the missed message, then RESUMED. */
function expectResumed(r: GatewayClient) {
  expect(r.frames.some((f) => f.op === 9)).toBe(false)
  expect(r.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.content)).toEqual(['missed'])
  expect(r.frames.at(-1)?.t).toBe('RESUMED')
}

const refresh = (app: { id: string; client_secret: string }, refreshToken: string, scope?: string) =>
  tokenRequest(
    '/oauth2/token',
    { grant_type: 'refresh_token', refresh_token: refreshToken, ...(scope ? { scope } : {}) },
    [app.id, app.client_secret],
  )

describe("an application's OAuth2 session", () => {
  test('another application’s Bearer token of the same user gets op 9 and none of the lobby’s events', async () => {
    const [appA, appB] = [await makeApp(), await makeApp()]
    const user = await makeUser()
    const post = await lobbyOf(appA, user)
    const mine = `Bearer ${(await grantTokens(user, appA, SCOPES)).access_token}`
    const theirs = `Bearer ${(await grantTokens(user, appB, SCOPES)).access_token}`
    const { sessionId, seq } = await droppedWithMissed(mine, post)
    expectRefused(await resume(theirs, sessionId, seq))
    expectRefused(await resume(theirs.slice('Bearer '.length), sessionId, seq)) // bare, as Identify accepts it
    expectResumed(await resume(mine, sessionId, seq))
  })

  test('another grant of the same application (a second authorization) gets op 9', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const post = await lobbyOf(app, user)
    const mine = `Bearer ${(await grantTokens(user, app, SCOPES)).access_token}`
    const { sessionId, seq } = await droppedWithMissed(mine, post)
    const otherGrant = `Bearer ${(await grantTokens(user, app, SCOPES)).access_token}`
    expectRefused(await resume(otherGrant, sessionId, seq))
    expectResumed(await resume(mine, sessionId, seq))
  })

  test('its own grant refreshed with fewer scopes gets op 9 (the session was given lobbies.write)', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const post = await lobbyOf(app, user)
    const granted = await grantTokens(user, app, SCOPES)
    const { sessionId, seq } = await droppedWithMissed(`Bearer ${granted.access_token}`, post)
    // A refresh keeps the grant (its token family) but may narrow it: still able to connect, without lobbies.write.
    const narrowed = await refresh(app, granted.refresh_token, 'identify gateway.connect')
    expect(narrowed.status).toBe(200)
    expectRefused(await resume(`Bearer ${narrowed.body.access_token}`, sessionId, seq))
  })

  test('its own grant refreshed with every scope resumes it (a client that refreshed while away)', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const post = await lobbyOf(app, user)
    const granted = await grantTokens(user, app, SCOPES)
    const { sessionId, seq } = await droppedWithMissed(`Bearer ${granted.access_token}`, post)
    const refreshed = await refresh(app, granted.refresh_token)
    expect(refreshed.status).toBe(200)
    expectResumed(await resume(`Bearer ${refreshed.body.access_token}`, sessionId, seq))
  })

  test('the user’s own token (a user session) and the application’s bot token get op 9', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const post = await lobbyOf(app, user)
    const mine = `Bearer ${(await grantTokens(user, app, SCOPES)).access_token}`
    const { sessionId, seq } = await droppedWithMissed(mine, post)
    expectRefused(await resume(user.token, sessionId, seq))
    expectRefused(await resume(`Bot ${app.bot_token}`, sessionId, seq))
    expectResumed(await resume(mine, sessionId, seq))
  })
})

describe("a user's session", () => {
  test('a token of another auth session of the same user, or an OAuth2 token of the user, gets op 9', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const post = await lobbyOf(app, user)
    const { sessionId, seq } = await droppedWithMissed(user.token, post)
    // A second login of the same user: its logout would not end the session it took.
    const { token: otherLogin } = await createSession(user.id, { platform: 'test' })
    expectRefused(await resume(otherLogin, sessionId, seq))
    const bearer = `Bearer ${(await grantTokens(user, app, SCOPES)).access_token}`
    expectRefused(await resume(bearer, sessionId, seq))
    expectResumed(await resume(user.token, sessionId, seq))
  })
})

describe("a bot's session", () => {
  test('another application’s bot token gets op 9; its own resumes it', async () => {
    const [appA, appB] = [await makeApp(), await makeApp()]
    const user = await makeUser()
    const botA = `Bot ${appA.bot_token}`
    const made = await api('POST', '/lobbies', { token: botA, body: { members: [{ id: user.id }] } })
    expect(made.status).toBe(201)
    // A bot hears its application's own topic: what is posted there while it is away is what it missed.
    const c = await sockets.connect()
    const ready = await c.identify(botA)
    const seq = c.lastSeq!
    c.close(4000)
    await c.waitForClose()
    events.publish(topics.app(appA.id), 'LOBBY_MESSAGE_CREATE', { content: 'missed' })
    expectRefused(await resume(`Bot ${appB.bot_token}`, ready.session_id, seq))
    expectRefused(await resume(appB.bot_token, ready.session_id, seq))
    expectResumed(await resume(botA, ready.session_id, seq))
  })
})
