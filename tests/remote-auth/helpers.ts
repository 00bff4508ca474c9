import { eq } from 'drizzle-orm'
import { db } from '../../src/db/client'
import { remoteAuthStats } from '../../src/remote-auth/desktop'
import { remoteAuthDesktops, remoteAuthTickets } from '../../src/remote-auth/tables'
import { api } from '../helpers'
import type { DesktopClient } from './desktop-client'

export const claim = (token: string, fingerprint: string) =>
  api('POST', '/users/@me/remote-auth', { token, body: { fingerprint } })
export const finish = (
  token: string,
  handshake_token: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) => api('POST', '/users/@me/remote-auth/finish', { token, body: { handshake_token, ...extra }, headers })
export const cancel = (token: string, handshake_token: string) =>
  api('POST', '/users/@me/remote-auth/cancel', { token, body: { handshake_token } })
export const login = (ticket: string, headers: Record<string, string> = {}) =>
  api('POST', '/users/@me/remote-auth/login', { body: { ticket }, headers })

export const desktopRow = async (fingerprint: string) =>
  db().select().from(remoteAuthDesktops).where(eq(remoteAuthDesktops.fingerprint, fingerprint)).get()
export const ticketRows = async () => db().select().from(remoteAuthTickets).all()

/** Wait until the server has seen a client-side close (its row and socket are gone). */
export async function serverForgot(desktop: DesktopClient, socketsBefore: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (remoteAuthStats().sockets < socketsBefore && !(await desktopRow(desktop.fingerprint))) return
    await Bun.sleep(10)
  }
  throw new Error('server did not notice the close')
}

/** Frames the desktop got after the handshake (pending_remote_init). */
export function after(desktop: DesktopClient): string[] {
  const ops = desktop.ops()
  return ops.slice(ops.indexOf('pending_remote_init') + 1)
}
