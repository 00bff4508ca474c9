// Bodies: the content types each route takes, invalid JSON, non-object bodies, streamed size limits, slow bodies.
import { afterEach, describe, expect, test } from 'bun:test'
import { connect as tcpConnect } from 'node:net'
import { config } from '../../src/config'
import { api, makeUser, resetWorld, server } from '../helpers'
import { makeGuild } from '../guilds/helpers'
import { createLobby, setup } from '../lobbies/helpers'
import { withConfig } from '../auth/helpers'

afterEach(resetWorld)

const send = (method: string, path: string, token: string, raw: string, type: string) =>
  api(method, path, { token, raw, headers: { 'content-type': type } })

describe('content types', () => {
  test('JSON routes refuse form, multipart and text bodies with 415 and an error body', async () => {
    const { bot } = await setup(0)
    for (const type of [
      'application/x-www-form-urlencoded',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/xml',
    ]) {
      const r = await send('POST', '/lobbies', bot, 'a=1', type)
      expect(r.status).toBe(415)
      expect(r.body).toEqual({ code: 0, message: expect.stringContaining('Unsupported content type') })
    }
  })

  test('the OAuth2 token endpoint takes form bodies; message routes take multipart with payload_json', async () => {
    const { bot } = await setup(0)
    const token = await api('POST', '/oauth2/token', {
      raw: 'grant_type=client_credentials',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(token.status).toBe(401) // understood, but no client credentials
    const lobby = await createLobby(bot)
    const form = new FormData()
    form.set('payload_json', JSON.stringify({ content: 'from a form' }))
    const { url } = await server()
    const r = await fetch(`${url}/api/v9/lobbies/${lobby.id}/messages`, {
      method: 'POST',
      headers: { authorization: bot },
      body: form,
    })
    // Bots are not members: the form was read (a 4xx about the caller, not 415).
    expect(r.status).not.toBe(415)
  })
})

describe('JSON', () => {
  test('invalid JSON answers 400 50109 on every route, and nothing is created', async () => {
    const { bot } = await setup(0)
    const lobby = await createLobby(bot)
    for (const [method, path] of [
      ['POST', '/lobbies'],
      ['PATCH', `/lobbies/${lobby.id}`],
      ['PATCH', `/lobbies/${lobby.id}/channel-linking`],
      ['POST', '/guilds/1/roles'],
    ]) {
      const r = await send(method, path, bot, '{"a":', 'application/json')
      expect(r.status).toBe(400)
      expect(r.body).toEqual({ code: 50109, message: 'The request body contains invalid JSON.' })
    }
  })

  test('an integer past 2^53 is read as the digits sent (a snowflake as a JSON number), a safe one stays a number', async () => {
    const { owner, channelId } = await makeGuild()
    const send = async () =>
      (await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'x' } })).body.id
    const ids: string[] = [await send(), await send()]
    expect(BigInt(ids[0]) > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true)
    const r = await api('POST', `/channels/${channelId}/messages/bulk-delete`, {
      token: owner.token,
      raw: `{"messages": [${ids[0]},${ids[1]}]}`,
    })
    expect(r.status).toBe(204)
    expect((await api('GET', `/channels/${channelId}/messages`, { token: owner.token })).body).toEqual([])
    // Exactly the digits sent: a user id as a number names that user.
    const target = await makeUser()
    const invite = await api('POST', `/channels/${channelId}/invites`, {
      token: owner.token,
      raw: `{"max_age": 0, "target_user_id": ${target.id}}`,
    })
    expect(invite.body.target_user.id).toBe(target.id)
  })

  test('a scalar or a list where a dictionary is expected: 400 50035, never treated as {}', async () => {
    const { bot } = await setup(0)
    const lobby = await createLobby(bot)
    for (const raw of ['5', '[]', '"text"', 'true']) {
      for (const [method, path] of [
        ['POST', '/lobbies'],
        ['PATCH', `/lobbies/${lobby.id}`],
      ]) {
        const r = await send(method, path, bot, raw, 'application/json')
        expect(r.status).toBe(400)
        expect(r.body.code).toBe(50035)
      }
    }
  })
})

describe('PATCH with nothing to change', () => {
  test('PATCH /channels/{id}: {}, null and no body answer the channel unchanged; [] and 12345 are 400, never 500', async () => {
    const owner = await import('../helpers').then((h) => h.makeUser())
    const guild = await api('POST', '/guilds', { token: owner.token, body: { name: 'Body tests' } })
    const channel = await api('POST', `/guilds/${guild.body.id}/channels`, {
      token: owner.token,
      body: { name: 'general' },
    })
    expect(channel.status).toBe(201)
    const same = await api('PATCH', `/channels/${channel.body.id}`, { token: owner.token, body: {} })
    expect(same.status).toBe(200)
    expect(same.body.name).toBe('general')
    for (const raw of ['[]', '12345'])
      expect((await send('PATCH', `/channels/${channel.body.id}`, owner.token, raw, 'application/json')).status).toBe(
        400,
      )
    // An empty body (none, or JSON null) is an edit without changes.
    for (const none of [
      await api('PATCH', `/channels/${channel.body.id}`, { token: owner.token }),
      await send('PATCH', `/channels/${channel.body.id}`, owner.token, 'null', 'application/json'),
    ]) {
      expect(none.status).toBe(200)
      expect(none.body.name).toBe('general')
    }
    const role = await api('POST', `/guilds/${guild.body.id}/roles`, { token: owner.token, body: { name: 'r' } })
    expect(
      (await api('PATCH', `/guilds/${guild.body.id}/roles/${role.body.id}`, { token: owner.token, body: {} })).status,
    ).toBe(200)
  })
})

/** A raw HTTP/1.1 exchange, so the test controls chunking and pacing. */
function rawHttp(
  port: number,
  head: string,
  chunks: (string | { waitMs: number })[],
  timeoutMs = 10_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, '127.0.0.1')
    let answer = ''
    const timer = setTimeout(() => (socket.destroy(), resolve(answer)), timeoutMs)
    socket.on('data', (d) => (answer += d.toString()))
    socket.on('close', () => (clearTimeout(timer), resolve(answer)))
    socket.on('error', (e) => (clearTimeout(timer), answer ? resolve(answer) : reject(e)))
    socket.on('connect', async () => {
      socket.write(head)
      for (const chunk of chunks) {
        if (typeof chunk === 'string') socket.write(chunk)
        else await Bun.sleep(chunk.waitMs)
        if (socket.destroyed) return
      }
    })
  })
}

describe('size and time', () => {
  test('a chunked body is counted against MAX_BODY_BYTES: the limit passes the size check, one byte more is 413', async () => {
    const { bot } = await setup(0)
    const { port } = await server()
    await withConfig({ maxBodyBytes: 1000 }, async () => {
      const body = (n: number) => `{"metadata":{"k":"${'v'.repeat(n - 21)}"}}`
      const chunked = (text: string) => [`${text.length.toString(16)}\r\n${text}\r\n`, '0\r\n\r\n']
      const head = `POST /api/v9/lobbies HTTP/1.1\r\nHost: x\r\nAuthorization: ${bot}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`
      expect(body(1000)).toHaveLength(1000)
      const atLimit = await rawHttp(port, head, chunked(body(1000)))
      expect(atLimit).not.toContain(' 413 ')
      expect(atLimit).toMatch(/^HTTP\/1\.1 (201|400) /)
      const over = await rawHttp(port, head, chunked(body(1001)))
      expect(over).toStartWith('HTTP/1.1 413 ')
      expect(over).toContain('"code":40005')
    })
  })

  test('a body that never finishes is answered 408 after the read deadline', async () => {
    const { bot } = await setup(0)
    const { port } = await server()
    const head = `POST /api/v9/lobbies HTTP/1.1\r\nHost: x\r\nAuthorization: ${bot}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n`
    expect(config().bodyTimeoutMs).toBe(30_000)
    await withConfig({ bodyTimeoutMs: 500 }, async () => {
      const answer = await rawHttp(port, head, ['{"meta', { waitMs: 200 }, 'data"'], 5000)
      expect(answer).toStartWith('HTTP/1.1 408 ')
      expect(answer).toContain('"code":0')
    })
  })
})

test('config default body limit is 1 MiB', () => {
  expect(config().maxBodyBytes).toBe(1048576)
})
