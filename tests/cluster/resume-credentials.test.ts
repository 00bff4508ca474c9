// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// Two nodes (`bun src/main.ts` processes on PostgreSQL and Redis, tests/cluster/harness.ts): an application's OAuth2
// session of a user, its socket gone from node A, is resumed only with its own grant's token (security issue 40,
// finding 2). Another application's Bearer token of the same user gets op 9 d:false and none of the lobby message the
// session missed, on A (the node that still holds it) and on B (a take-over from another node); the session's own
// token then resumes it on B with that message.
import { describe, expect, test } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import type { GatewayClient } from '../gateway-client'
import { cli } from '../ops/process-helpers'
import type { Served } from '../ops/process-helpers'
import { call, present, useNodes } from './harness'

const cluster = await useNodes(2)
const REDIRECT = 'http://localhost/callback'
const SCOPES = 'identify gateway.connect lobbies.write'

/** An application (made by the CLI) that may redirect to REDIRECT. */
async function newApp() {
  const made = await cli(cluster.env, [
    'app',
    'create',
    '--name',
    `Resume game ${Date.now()}`,
    '--redirect-uri',
    REDIRECT,
  ])
  if (made.code !== 0) throw new Error(made.stderr)
  return JSON.parse(made.stdout) as { id: string; client_secret: string; bot_token: string }
}

/** `Bearer <token>` of the user through the application: consent and code exchange (PKCE), through `node`. */
async function bearer(node: Served, user: { token: string }, app: { id: string; client_secret: string }) {
  const verifier = randomBytes(32).toString('base64url')
  const query = new URLSearchParams({
    client_id: app.id,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: SCOPES,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  })
  const consent = await call(node, 'POST', `/oauth2/authorize?${query}`, user.token, { authorize: true })
  expect(consent.status).toBe(200)
  const code = new URL(consent.body.location).searchParams.get('code')!
  const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }
  const r = await fetch(`${node.url}/api/v10/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${app.id}:${app.client_secret}`).toString('base64')}`,
    },
    body: new URLSearchParams(form).toString(),
  })
  expect(r.status).toBe(200)
  return `Bearer ${((await r.json()) as { access_token: string }).access_token}`
}

async function resumeOn(node: Served, token: string, sessionId: string, seq: number): Promise<GatewayClient> {
  const socket = await cluster.connect(node)
  socket.send(6, { token, session_id: sessionId, seq })
  await socket.waitFor((f) => f.t === 'RESUMED' || f.op === 9, 5000)
  return socket
}

describe.skipIf(!present)('two nodes: a Resume needs the session’s own grant', () => {
  test('another application’s Bearer token of the user gets op 9 on either node; the session’s own resumes on B', async () => {
    const [a, b] = cluster.nodes
    const [appA, appB] = [await newApp(), await newApp()]
    const user = await cluster.newUser()
    const botA = `Bot ${appA.bot_token}`
    const lobby = await call(a, 'POST', '/lobbies', botA, { members: [{ id: user.id }] })
    expect(lobby.status).toBe(201)
    const mine = await bearer(a, user, appA)
    const theirs = await bearer(b, user, appB)
    const { client, ready } = await cluster.socketOn(a, mine)
    expect(ready.application.id).toBe(appA.id)
    const post = (content: string) => call(b, 'POST', `/lobbies/${lobby.body.id}/messages`, botA, { content })
    expect((await post('seen')).status).toBe(201)
    await client.waitFor((f) => f.d?.content === 'seen', 5000)
    const seq = client.lastSeq!
    client.close(4000) // resumable
    await client.waitForClose()
    expect((await post('missed')).status).toBe(201)
    for (const node of [a, b]) {
      const refused = await resumeOn(node, theirs, ready.session_id, seq)
      expect(refused.frames.at(-1)).toMatchObject({ op: 9, d: false })
      expect(refused.dispatches('LOBBY_MESSAGE_CREATE')).toEqual([])
    }
    const resumed = await resumeOn(b, mine, ready.session_id, seq)
    expect(resumed.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.content)).toEqual(['missed'])
    expect(resumed.frames.at(-1)?.t).toBe('RESUMED')
  }, 30_000)
})
