// Gateway sessions kept in Redis for a Resume on any node (gateway/bus.ts SessionRegistry): `gw:sess:<id>` holds a
// session's caller, topics and READY's sequence as JSON, saved by the node that holds the session at Identify and at
// each change (its topics, its auth session), not at disconnect (a node that dies says nothing). It lives while the
// node refreshes it (every live session, every few seconds) and for the resume window after: a session whose node
// died can be resumed elsewhere until then. A taker claims the session first (`gw:sess:<id>:take`, one taker at a
// time, let go when its take is over: the next node of a rolling restart takes it again at once), replays from the
// log, and tells every node through the log (`take-session`) to let go of its copy. A node also lists the sessions it
// holds with their callers (`gw:node-sessions:<node>`, no expiry): once it is dead, the clean-up (cleanup.ts) ends
// those no node resumed.
import { log } from '../core/log'
import type { LoggedEntry, SessionRecord, SessionRegistry } from '../gateway/bus'
import { type GatewayLog, isGatewayEntry } from './log'
import { RELEASE } from './leases'
import { luaScript, type Redis } from './redis'

export const sessionKey = (id: string) => `gw:sess:${id}`
/** The sessions a node holds: session id → its caller (JSON). */
export const nodeSessionsKey = (node: string) => `gw:node-sessions:${node}`

/** A record as saved: the node that holds the session with it. */
export type SavedRecord = SessionRecord & { node?: string }

// KEYS: the record, the take lock. ARGV: the taker, the lock's ms. The record, if there is one and no other take is
// under way.
const CLAIM = luaScript(`
local record = redis.call('GET', KEYS[1])
if not record then return false end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
return record
`)

/** How long one take may last before another node may claim the session again. */
const TAKE_MS = 5000

export function recordOf(json: string): SavedRecord | undefined {
  try {
    const r = JSON.parse(json) as SavedRecord
    if (typeof r?.id === 'string' && typeof r.caller?.userId === 'string' && Array.isArray(r.topics)) return r
  } catch {}
  return undefined
}

/** The registry on one connection; records live `ttlMs` past their last save or refresh. */
export function sessionRegistry(redis: Redis, gatewayLog: GatewayLog, node: string, ttlMs: number): SessionRegistry {
  const failed = (what: string) => (error: unknown) =>
    log.warn(`gateway sessions: ${what} failed`, { error: String(error) })
  // Sessions being taken from another node: that node's list no longer holds them once this one saves them.
  const takenFrom = new Map<string, string>()
  return {
    node,
    save(record) {
      const batch = redis
        .multi()
        .set(sessionKey(record.id), JSON.stringify({ ...record, node }), 'PX', ttlMs)
        .hset(nodeSessionsKey(node), record.id, JSON.stringify(record.caller))
      const from = takenFrom.get(record.id)
      if (from !== undefined && from !== node) batch.hdel(nodeSessionsKey(from), record.id)
      takenFrom.delete(record.id)
      batch.exec().catch(failed('a save'))
    },
    drop(sessionId) {
      redis.multi().del(sessionKey(sessionId)).hdel(nodeSessionsKey(node), sessionId).exec().catch(failed('a drop'))
    },
    refresh(sessionIds) {
      if (sessionIds.length === 0) return
      const batch = redis.pipeline()
      for (const id of sessionIds) batch.pexpire(sessionKey(id), ttlMs)
      batch.exec().catch(failed('a refresh'))
    },
    async claim(sessionId) {
      const json = await CLAIM(redis, [sessionKey(sessionId), `${sessionKey(sessionId)}:take`], [node, TAKE_MS])
      const record = typeof json === 'string' ? recordOf(json) : undefined
      if (record?.node !== undefined) takenFrom.set(sessionId, record.node)
      return record
    },
    async claimed(sessionId) {
      takenFrom.delete(sessionId)
      await RELEASE(redis, [`${sessionKey(sessionId)}:take`], [node]).catch(failed('a take release'))
    },
    async range(afterSeq, uptoSeq) {
      const got = await gatewayLog.range(afterSeq, uptoSeq)
      if (got.trimmed) return undefined
      const out: { seq: number; entry: LoggedEntry }[] = []
      for (const { seq, entry } of got.entries) if (isGatewayEntry(entry)) out.push({ seq, entry })
      return out
    },
  }
}
