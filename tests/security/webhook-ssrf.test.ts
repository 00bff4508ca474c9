// The event webhooks' SSRF guard (issue 40, finding 4): every spelling of a non-public address is refused, IPv4 inside
// IPv6 included (::7f00:1, ::ffff:0:7f00:1, NAT64 64:ff9b::/96, 6to4), and a call connects to the address it checked:
// a name that answers a public address when the URL is set and a private one when it is called (DNS rebinding) is
// refused at the call, and the request goes to the checked address with the name as Host and TLS server name. The
// resolver is a plain parameter of the functions (the system's by default), so these tests answer for DNS.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { config, setConfig } from '../../src/config'
import { checkWebhookUrl, sendApplicationEvent, verifyEventWebhooksUrl } from '../../src/oauth2/event-webhooks'
import { isPublicAddress } from '../../src/oauth2/public-address'
import { makeApp, server } from '../helpers'

const PUBLIC = '93.184.215.14'
const allowPrivate = (allow: boolean) => setConfig({ ...config(), eventWebhooksAllowPrivate: allow })
afterEach(() => allowPrivate(false))
// The server (and on PostgreSQL its database) starts before the tests, not inside the first one's time.
beforeAll(() => server(), 60_000)

/** A resolver that answers each call with the next of `answers` (the last one again after that), and counts. */
function resolver(...answers: string[][]) {
  const asked: string[] = []
  const resolve = async (host: string) => {
    asked.push(host)
    return answers[Math.min(asked.length - 1, answers.length - 1)]
  }
  return { resolve, asked }
}

/** A receiver on 127.0.0.1 that records the Host of each call and answers 204. */
function receiver() {
  const hosts: string[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      hosts.push(request.headers.get('host') ?? '')
      return new Response(null, { status: 204 })
    },
  })
  return { port: server.port, hosts, stop: () => server.stop(true) }
}
const receivers: ReturnType<typeof receiver>[] = []
afterAll(() => {
  for (const r of receivers) r.stop()
})

/** The message of a refused URL (a form error at `event_webhooks_url`). */
async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = (await promise.then(
    () => undefined,
    (e) => e,
  )) as { status?: number; errors?: any } | undefined
  expect(error?.status).toBe(400)
  return error!.errors.event_webhooks_url._errors[0].message
}

describe('which addresses are public', () => {
  test('IPv4: private, loopback, link-local, CGNAT, this-network, documentation, reserved and broadcast are not', () => {
    for (const a of [
      '0.0.0.0',
      '0.1.2.3',
      '10.0.0.1',
      '100.64.0.1',
      '100.127.255.254',
      '127.0.0.1',
      '127.255.255.255',
      '169.254.169.254',
      '172.16.0.1',
      '172.31.255.255',
      '192.0.0.8',
      '192.0.2.1',
      '192.88.99.1',
      '192.168.1.1',
      '198.18.0.1',
      '198.19.255.255',
      '198.51.100.1',
      '203.0.113.9',
      '224.0.0.1',
      '239.255.255.250',
      '240.0.0.1',
      '255.255.255.255',
    ])
      expect([a, isPublicAddress(a)]).toEqual([a, false])
    // The edges just outside the ranges are public.
    for (const a of ['1.1.1.1', '9.255.255.255', '11.0.0.0', '100.63.255.255', '100.128.0.0', '172.15.255.255'])
      expect([a, isPublicAddress(a)]).toEqual([a, true])
    for (const a of ['172.32.0.0', '192.169.0.0', '198.17.255.255', '198.20.0.0', '223.255.255.255', PUBLIC])
      expect([a, isPublicAddress(a)]).toEqual([a, true])
  })

  test('IPv6: every form that carries a private IPv4 address, and the non-global ranges, are not', () => {
    for (const a of [
      '::',
      '::1',
      '::7f00:1', // IPv4-compatible ::127.0.0.1 (finding 4)
      '::127.0.0.1',
      '::a00:1',
      '::8.8.8.8', // IPv4-compatible is deprecated: refused whatever it carries
      '::ffff:127.0.0.1', // IPv4-mapped
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::ffff:0:7f00:1', // IPv4-translated (finding 4)
      '::ffff:0:10.1.2.3',
      '::ffff:0:c0a8:101',
      '64:ff9b::7f00:1', // NAT64 (finding 4)
      '64:ff9b::10.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b:1::8.8.8.8', // local-use NAT64: refused whole
      '64:ff9b:1:abcd::1',
      '64:ff9b:0:0:1::808:808', // inside 64:ff9b::/32, outside the well-known /96
      '2002:7f00:1::', // 6to4 of 127.0.0.1
      '2002:c0a8:101::1', // 6to4 of 192.168.1.1
      '2002:a00:1:1::1',
      '2001::1', // Teredo
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      '2001:db8::1',
      '3fff::1',
      '2001:10::1',
      '2001:20::1',
      '100::1',
      'fc00::1',
      'fd12:3456:789a::1',
      'fe80::1',
      'fe80::1%eth0',
      'febf::1',
      'fec0::1',
      'feff::1',
      'ff02::1',
      'ff05::1:3',
    ])
      expect([a, isPublicAddress(a)]).toEqual([a, false])
    for (const a of [
      '2606:4700:4700::1111',
      '2a00:1450:4001:80b::200e',
      '::ffff:8.8.8.8', // mapped, translated, NAT64 and 6to4 of a public address are public
      '::ffff:808:808',
      '::ffff:0:8.8.8.8',
      '64:ff9b::8.8.8.8',
      '64:ff9b::808:808',
      '2002:808:808::1',
      '2001:4860::8888', // 2001:4860::/32 is not Teredo (2001:0::/32)
      '[2606:4700:4700::1111]',
    ])
      expect([a, isPublicAddress(a)]).toEqual([a, true])
    for (const a of ['', 'localhost', 'example.com', '1.2.3', '1.2.3.256', ':::1', '1::2::3', '12345::1', 'g::1'])
      expect([a, isPublicAddress(a)]).toEqual([a, false])
  })
})

describe('checkWebhookUrl', () => {
  test('each spelling of a non-public address in a URL is refused, without asking a resolver', async () => {
    const { resolve, asked } = resolver([PUBLIC])
    for (const url of [
      'http://2130706433/x', // 127.0.0.1 in decimal: the URL parser reads it as an address
      'http://0x7f.1/x',
      'http://0177.0.0.1/x',
      'http://127.1/x',
      'http://0/x',
      'http://0x0a.0.0.1/x',
      'http://[::7f00:1]/x',
      'http://[::127.0.0.1]/x',
      'http://[::ffff:0:7f00:1]/x',
      'http://[::ffff:0:127.0.0.1]/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://[64:ff9b::7f00:1]/x',
      'http://[64:ff9b::192.168.0.1]/x',
      'http://[64:ff9b:1::a00:1]/x',
      'http://[2002:7f00:1::1]/x',
      'http://[2001::1]/x',
      'http://[fd00::1]/x',
      'http://[fe80::1]/x',
      'http://[fec0::1]/x',
      'http://[ff02::1]/x',
      'http://[::]/x',
      'https://[::1]:8443/x',
      'http://255.255.255.255/x',
      'http://100.100.100.100/x',
    ])
      expect([url, await refusal(checkWebhookUrl(url, undefined, resolve))]).toEqual([
        url,
        'Its host is a loopback, private or otherwise non-public address.',
      ])
    expect(asked).toEqual([])
    expect((await checkWebhookUrl('https://[64:ff9b::808:808]/x', undefined, resolve)).hostname).toBe(
      '[64:ff9b::808:808]',
    )
  })

  test('a name is refused when any of its addresses is not public, in any form', async () => {
    for (const answer of [['127.0.0.1'], [PUBLIC, '10.0.0.1'], ['::ffff:0:7f00:1'], [PUBLIC, '64:ff9b::a00:1'], []]) {
      const { resolve, asked } = resolver(answer)
      const message = await refusal(checkWebhookUrl('https://hook.example.test/events', undefined, resolve))
      expect(message).toBe(
        answer.length
          ? 'Its host is a loopback, private or otherwise non-public address.'
          : 'Its host does not resolve.',
      )
      expect(asked).toEqual(['hook.example.test'])
    }
    const { resolve } = resolver([PUBLIC, '2606:4700:4700::1111'])
    expect((await checkWebhookUrl('https://hook.example.test/events', undefined, resolve)).href).toBe(
      'https://hook.example.test/events',
    )
  })
})

describe('DNS rebinding: a call connects to the address it checked', () => {
  test('a name that answers public to the check and private to the call is refused at the call: nothing is sent', async () => {
    const r = receiver()
    receivers.push(r)
    const app = await makeApp()
    const url = `http://hook.example.test:${r.port}/events`
    const { resolve, asked } = resolver([PUBLIC], ['127.0.0.1'])
    const message = await refusal(verifyEventWebhooksUrl(app.id, url, undefined, resolve))
    expect(message).toBe(
      'The URL did not acknowledge the PING (Its host is a loopback, private or otherwise non-public address.).',
    )
    // Asked once to check the URL and once more to call it; the second answer was checked too.
    expect(asked).toEqual(['hook.example.test', 'hook.example.test'])
    // An event to a lobby's URL: the same at the call.
    const flip = resolver(['::ffff:0:7f00:1'])
    expect(await sendApplicationEvent(app.id, '{}', url, flip.resolve)).toEqual({
      ok: false,
      error: 'Its host is a loopback, private or otherwise non-public address.',
    })
    expect(flip.asked).toEqual(['hook.example.test'])
    expect(r.hosts).toEqual([])
  })

  test("the request goes to the resolver's address, with the name as Host (private addresses allowed)", async () => {
    allowPrivate(true)
    const r = receiver()
    receivers.push(r)
    const app = await makeApp()
    // hook.example.test has no address but the one this resolver gives: the call can only have used it.
    const url = `http://hook.example.test:${r.port}/events`
    const { resolve, asked } = resolver(['127.0.0.1'])
    expect(await verifyEventWebhooksUrl(app.id, url, undefined, resolve)).toBe(url)
    expect(await sendApplicationEvent(app.id, '{"event":1}', url, resolve)).toEqual({ ok: true })
    expect(r.hosts).toEqual([`hook.example.test:${r.port}`, `hook.example.test:${r.port}`])
    expect(asked).toEqual(['hook.example.test', 'hook.example.test', 'hook.example.test'])
    // An IPv6 answer is called as a bracketed literal.
    const six = Bun.serve({
      port: 0,
      hostname: '::1',
      fetch: (q) => new Response(q.headers.get('host'), { status: 204 }),
    })
    try {
      const v6 = `http://hook6.example.test:${six.port}/`
      expect(await sendApplicationEvent(app.id, '{}', v6, resolver(['::1']).resolve)).toEqual({ ok: true })
    } finally {
      six.stop(true)
    }
  })

  test('https: the TLS server name is the host name, not the address connected to', async () => {
    allowPrivate(true)
    // A TCP listener that reads the ClientHello (the server name travels in it in clear) and closes.
    let hello = ''
    const listener = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        data(socket, data) {
          hello += Buffer.from(data).toString('latin1')
          socket.end()
        },
      },
    })
    try {
      const app = await makeApp()
      const url = `https://hook.example.test:${listener.port}/events`
      const result = await sendApplicationEvent(app.id, '{}', url, resolver(['127.0.0.1']).resolve)
      expect(result.ok).toBe(false)
      expect(hello).toContain('hook.example.test')
    } finally {
      listener.stop(true)
    }
  })
})
