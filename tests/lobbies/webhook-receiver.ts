// A real event webhooks receiver for the tests: a Bun.serve endpoint that checks every call's X-Signature-Ed25519 with
// crypto.subtle against the application's verify_key (as a game's server would), and answers as told.
import { clock } from '../../src/core/clock'
import { eventDeliveriesIdle, kickEventDeliveries } from '../../src/lobbies/event-webhooks'
import { setEventWebhooksUrl } from '../../src/oauth2/event-webhooks'
import { findApplication } from '../../src/oauth2/store'
import { setup } from './helpers'

export type Call = { body: any; raw: string; verified: boolean }

/** An application's webhook endpoint: verifies each signature, answers as `answer` says. */
export function receiver() {
  const calls: Call[] = []
  let verifyKey = ''
  let answer: (call: Call, index: number) => number | Promise<number> = () => 204
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const raw = await request.text()
      const signature = request.headers.get('x-signature-ed25519') ?? ''
      const timestamp = request.headers.get('x-signature-timestamp') ?? ''
      let verified = false
      try {
        const key = await crypto.subtle.importKey('raw', Buffer.from(verifyKey, 'hex'), { name: 'Ed25519' }, false, [
          'verify',
        ])
        verified = await crypto.subtle.verify(
          { name: 'Ed25519' },
          key,
          Buffer.from(signature, 'hex'),
          new TextEncoder().encode(timestamp + raw),
        )
      } catch {}
      const call = { body: JSON.parse(raw), raw, verified }
      calls.push(call)
      // As Discord asks of an endpoint: a bad signature is 401.
      if (!verified) return new Response('bad signature', { status: 401 })
      return new Response(null, { status: await answer(call, calls.length - 1) })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}/events`,
    calls,
    events: () => calls.filter((c) => c.body.type === 1 && c.verified),
    trust: (key: string) => (verifyKey = key),
    answer: (fn: typeof answer) => (answer = fn),
    stop: () => server.stop(true),
  }
}

const receivers: ReturnType<typeof receiver>[] = []
export function newReceiver() {
  const r = receiver()
  receivers.push(r)
  return r
}
/** Stop every receiver made so far (a test file's afterAll). */
export const stopReceivers = () => receivers.splice(0).forEach((r) => r.stop())

/** An application whose event webhooks go to a fresh receiver. */
export async function hooked() {
  const world = await setup(1)
  const r = newReceiver()
  r.trust((await findApplication(world.app.id))!.verifyKey!)
  await setEventWebhooksUrl(world.app.id, r.url)
  return { ...world, receiver: r }
}

/** Wait until `check` holds, running the delivery worker (retries come due by moving the clock). */
export async function until(check: () => boolean | Promise<boolean>, what: string, { advanceMs = 0 } = {}) {
  for (let i = 0; i < 200; i++) {
    if (await check()) return
    if (advanceMs) clock.advance(advanceMs)
    kickEventDeliveries()
    await eventDeliveriesIdle()
    await Bun.sleep(10)
  }
  throw new Error(`never: ${what}`)
}
