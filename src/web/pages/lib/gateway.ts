// Just enough of the Gateway for the pages: identify once and read READY (the hash of this browser's auth session,
// which the REST session list does not mark), then close.
import { session } from './api'

export function currentSessionHash(timeoutMs = 5000): Promise<string | null> {
  const token = session.token()
  if (!token) return Promise.resolve(null)
  return new Promise((resolve) => {
    const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/gateway?v=9&encoding=json`)
    const done = (hash: string | null) => {
      clearTimeout(timer)
      resolve(hash)
      if (socket.readyState <= WebSocket.OPEN) socket.close(1000)
    }
    const timer = setTimeout(() => done(null), timeoutMs)
    socket.addEventListener('message', (event) => {
      let frame: { op?: number; t?: string; d?: any }
      try {
        frame = JSON.parse(String(event.data))
      } catch {
        return done(null)
      }
      if (frame.op === 10) socket.send(JSON.stringify({ op: 2, d: { token, properties: { os: 'web', browser: 'web', device: '' }, intents: 0 } }))
      else if (frame.op === 0 && frame.t === 'READY') done(typeof frame.d?.auth_session_id_hash === 'string' ? frame.d.auth_session_id_hash : null)
    })
    socket.addEventListener('error', () => done(null))
    socket.addEventListener('close', () => done(null))
  })
}
