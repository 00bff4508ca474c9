// The Gateway's limits on its sockets: unidentified sockets per client address, frames per window, and the sweep that
// closes or ends what ran out of time (a heartbeat late, no Identify, a resume window past, a credential ended).
import { config } from '../config'
import { appState } from '../core/app'
import type { Caller } from '../core/caller'
import { clock } from '../core/clock'
import type { IpKey } from '../core/ip-key'
import { log } from '../core/log'
import { checkForeignCommits, foreignCommitsSeen } from '../db/cache'
import { settledCommits } from '../db/client'
import { wiring } from './bus'
import { type Connection, close, connectionOf, openSockets } from './connection'
import { endSession, gatewayLog } from './dispatch'
import { Close, FRAME_WINDOW_MS, framesPerWindow, IDENTIFY_TIMEOUT_MS, MAX_PENDING_PER_IP } from './protocol'
import { allSessions } from './sessions'

/** What this module holds per service (core/app.ts). */
const newGatewayLimits = () => ({
  // Unidentified sockets per client IP: a flood of idle sockets is refused at the door.
  pendingByIp: new Map<IpKey, number>(),
  sweeps: 0,
  commitsChecked: 0,
})
declare module '../core/app' {
  interface AppState {
    gatewayLimits: ReturnType<typeof newGatewayLimits>
  }
}
const gw = appState('gatewayLimits', newGatewayLimits)

/** A socket just opened counts against its address; false when the address has too many unidentified ones. */
export function admitPending(conn: Connection): boolean {
  const st = gw()
  const ip = conn.pendingIp!
  const pending = st.pendingByIp.get(ip) ?? 0
  if (pending >= MAX_PENDING_PER_IP) {
    conn.pendingIp = undefined // not counted
    return false
  }
  st.pendingByIp.set(ip, pending + 1)
  return true
}

/** The socket identified, resumed or closed: it no longer counts against its address. */
export function settlePending(conn: Connection): void {
  const st = gw()
  const ip = conn.pendingIp
  if (ip === undefined) return
  conn.pendingIp = undefined
  const left = (st.pendingByIp.get(ip) ?? 1) - 1
  if (left > 0) st.pendingByIp.set(ip, left)
  else st.pendingByIp.delete(ip)
}

/** Count a frame received; true when the socket sent more than its window allows. */
export function overFrameLimit(conn: Connection): boolean {
  const now = clock.now()
  if (now - conn.windowStart >= FRAME_WINDOW_MS) {
    conn.windowStart = now
    conn.frames = 0
  }
  conn.frames += 1
  return conn.frames > framesPerWindow(config().gatewayHeartbeatMs)
}

const CREDENTIAL_CHECK_EVERY = 5 // sweeps (seconds), or at the next sweep after another process committed
const RECORD_REFRESH_EVERY = 10 // sweeps (seconds); a record lives the resume window and 20 s past its last refresh

/** Once a second (server.ts attachGateway): what ran out of time is closed or ended. */
export function sweepExpired(): void {
  const st = gw()
  const now = clock.now()
  const beatNow = performance.now()
  for (const s of allSessions().values()) if (!s.ws && s.resumableUntil <= now) endSession(s)
  for (const ws of openSockets()) {
    const conn = connectionOf(ws)
    if (conn.closing) continue
    if (beatNow > conn.beatBy) close(ws, Close.SessionTimedOut, 'Session timed out')
    else if (!conn.session && !conn.identifying && now - conn.openedAt >= IDENTIFY_TIMEOUT_MS)
      close(ws, Close.NotAuthenticated, 'Not authenticated')
  }
  st.sweeps += 1
  // Several nodes: the records of the sessions with a socket here live on (a dead node's expire after the window).
  const logPort = gatewayLog()
  if (logPort && st.sweeps % RECORD_REFRESH_EVERY === 0) {
    const live: string[] = []
    for (const s of allSessions().values()) if (s.ws) live.push(s.id)
    logPort.sessions.refresh(live)
  }
  // A credential ended in this process closes its sockets at once (the bus); one ended by another process (the CLI's
  // `user lock`) is seen here within a second of its commit, and expiry within CREDENTIAL_CHECK_EVERY seconds.
  checkForeignCommits()
  const commits = foreignCommitsSeen()
  if (commits !== st.commitsChecked || st.sweeps % CREDENTIAL_CHECK_EVERY === 0) {
    st.commitsChecked = commits
    void closeEndedCredentials()
  }
}

/** The id a session's credential is checked by: its auth session, its token family (OAuth2), its application (bot). */
function credentialOf(caller: Caller): string {
  return caller.kind === 'user' ? caller.sessionId : caller.kind === 'bearer' ? caller.familyId : caller.applicationId
}

/** Close (4004) the connections whose auth session, token family or application no longer authenticates. */
export async function closeEndedCredentials(): Promise<void> {
  for (const kind of ['user', 'bearer', 'bot'] as const) {
    const check = wiring().credentialChecks[kind]
    if (!check) continue
    const held = [...allSessions().values()].filter((s) => s.caller.kind === kind)
    if (!held.length) continue
    try {
      const ids = held.map((s) => credentialOf(s.caller))
      const alive = await check([...new Set(ids)])
      if (ids.every((id) => alive.has(id))) continue
      // A transaction of this process that ended a credential and moved its sockets (AUTH_SESSION_CHANGE) may be
      // committed but not yet have given its events (PostgreSQL: between COMMIT's answer and its after-commit work).
      await settledCommits()
      // Several nodes: a credential replaced through another node (a new token) is gone from the database before its
      // AUTH_SESSION_CHANGE comes through the log; apply what was committed first (or ask again at the next check).
      const logPort = gatewayLog()
      if (logPort && !(await logPort.caughtUp())) continue
      // Only sessions still held with the credential checked (one may have ended or moved to a new token meanwhile).
      held.forEach((s, i) => {
        if (!alive.has(ids[i]) && allSessions().get(s.id) === s && credentialOf(s.caller) === ids[i])
          endSession(s, 4004, 'Authentication failed')
      })
    } catch (error) {
      log.error('credential check failed', { kind, error: String(error) })
    }
  }
}
