// /remote-auth?v=2: the remote-auth gateway's WebSocket on the same server as the API and /gateway.
import { Elysia } from 'elysia'
import { clientInfo } from '../accounts/client-info'
import { log } from '../core/log'
import { clientIp } from '../http/client-ip'
import { Close, onFrame, onSocketClosed, openDesktop, type Socket } from './desktop'

type Context = { query?: Record<string, string | undefined>; request: Request }

export const remoteAuthSocket = new Elysia({ name: 'remote-auth-socket' }).ws('/remote-auth', {
  detail: { hide: true },
  open(ws) {
    const raw = ws.raw as Socket
    const { query, request } = ws.data as unknown as Context
    // The socket's own address; X-Forwarded-For only with TRUST_PROXY (as for REST).
    const ip = clientIp(request, { requestIP: () => ({ address: raw.remoteAddress }) })
    openDesktop(raw, query?.v, clientInfo(request, ip), request.headers.get('origin'))
  },
  async message(ws, message) {
    const raw = ws.raw as Socket
    try {
      await onFrame(raw, message)
    } catch (error) {
      log.error('remote-auth frame failed', { error: String(error) })
      raw.close(Close.DecodeError, 'Decode error')
    }
  },
  async close(ws) {
    await onSocketClosed(ws.raw as Socket)
  },
})
