// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// Remote (QR) login across nodes (src/remote-auth/desktop.ts desktopFor): the desktop's socket is on B, the phone's
// REST calls land on A, and the desktop's ticket exchange on C. B holds the desktop's place, A sends it pending_ticket
// and pending_login (then the close) as messages to B; the ticket from B's socket redeems on C for a session token.
import { afterAll, describe, expect, test } from 'bun:test'
import { DesktopClient } from '../remote-auth/desktop-client'
import { call, newUser, present, useNodes } from './harness'

const world = await useNodes(3)
const desktops: DesktopClient[] = []
afterAll(() => {
  for (const d of desktops) d.ws.close()
})

/** A desktop with its socket on one node, claimed by a phone through another: it got pending_ticket. */
async function claimed(desktopOn: { port: number }, claimThrough: { url: string }) {
  const phone = await newUser(world.env)
  const desktop = await DesktopClient.ready('nonce', { port: desktopOn.port })
  desktops.push(desktop)
  const claim = await call(claimThrough, 'POST', '/users/@me/remote-auth', phone.token, {
    fingerprint: desktop.fingerprint,
  })
  expect(claim.status).toBe(200)
  const pending = await desktop.waitFor('pending_ticket', 5000)
  return { phone, desktop, handshake: claim.body.handshake_token as string, pending }
}

describe.skipIf(!present)('remote-auth on three nodes', () => {
  test('a claim and a finish through A reach the desktop socket on B; its ticket redeems through C', async () => {
    const [a, b, c] = world.nodes
    const { phone, desktop, handshake, pending } = await claimed(b, a)
    expect(desktop.decrypt(pending.encrypted_user_payload).toString()).toStartWith(`${phone.id}:`)

    const finish = await call(a, 'POST', '/users/@me/remote-auth/finish', phone.token, {
      handshake_token: handshake,
    })
    expect(finish.status).toBe(204)
    const { ticket } = await desktop.waitFor('pending_login', 5000)
    expect((await desktop.waitForClose(5000)).code).toBe(1000)

    const login = await call(c, 'POST', '/users/@me/remote-auth/login', undefined, { ticket })
    expect(login.status).toBe(200)
    const token = desktop.decrypt(login.body.encrypted_token).toString()
    const me = await call(b, 'GET', '/users/@me', token)
    expect(me.status).toBe(200)
    expect(me.body.id).toBe(phone.id)
  }, 60_000)

  test('a cancel through C reaches the desktop on A; a fingerprint no node holds is refused on every node', async () => {
    const [a, b, c] = world.nodes
    const { phone, desktop, handshake } = await claimed(a, b)
    const cancel = await call(c, 'POST', '/users/@me/remote-auth/cancel', phone.token, { handshake_token: handshake })
    expect(cancel.status).toBe(204)
    await desktop.waitFor('cancel', 5000)
    expect((await desktop.waitForClose(5000)).code).toBe(1000)

    // Gone with its socket: no node finds it.
    for (const node of world.nodes) {
      const again = await call(node, 'POST', '/users/@me/remote-auth', phone.token, {
        fingerprint: desktop.fingerprint,
      })
      expect(again.status).toBe(400)
      expect(again.body.code).toBeNumber()
    }
  }, 60_000)
})
