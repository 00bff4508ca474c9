// Node-addressed work (gateway/nodes.ts NodeRouting) on Redis: each node reads a stream of its own, `gw:node:<node>`,
// that only it reads (the Gateway's log is read by every node: this is for what one node must do, e.g. a voice op for
// the call it holds, a frame for the remote-auth desktop whose socket it has). Places are keys holding a node's name
// (`<node id>:<instance>`, as presence names it); a holder counts only while its node id's lease holds that instance
// (leases.ts), so what a dead node held is taken by the next node that asks. A node lists the places it took
// (`cluster:owned:<node>`), so that once it is dead the clean-up (cleanup.ts) knows what it held.

import { log } from '../core/log'
import { type NodeRouting, receiveNodeMessage } from '../gateway/nodes'
import { nodeIdKey, RELEASE, RENEW } from './leases'
import { luaScript, openBlockingRedis, type Redis } from './redis'

const streamKey = (node: string) => `gw:node:${node}`
/** The places a node took and has not given up (a hash: place key → 1). */
export const ownedKey = (node: string) => `cluster:owned:${node}`
/** Messages a node's stream keeps (about), and how long a stream outlives its last message (a dead node's goes). */
const STREAM_LENGTH = 10_000
const STREAM_TTL_MS = 3_600_000

// Whether the node named in a holder value (`<id>:<instance>`) still holds its node id: ARGV[n] the node id key's
// prefix. Shared by the scripts below.
const LIVE = `
local function live(holder, prefix)
  local sep = string.find(holder, ':', 1, true)
  if not sep then return false end
  return redis.call('GET', prefix .. string.sub(holder, 1, sep - 1)) == string.sub(holder, sep + 1)
end
`
const PREFIX = nodeIdKey(0).slice(0, -1)

// KEYS: the place, this node's list of places. ARGV: this node, ttl (ms), the node id key's prefix. The live holder,
// or this node (taken, and listed).
const PLACE = luaScript(`${LIVE}
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] and live(holder, ARGV[3]) then return holder end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[2], KEYS[1], '1')
return ARGV[1]
`)
// KEYS: the place. ARGV: the node id key's prefix. The live holder, or false.
const HOLDER = luaScript(`${LIVE}
local holder = redis.call('GET', KEYS[1])
if holder and live(holder, ARGV[1]) then return holder end
return false
`)
// KEYS: the set. ARGV: the field, this node, the most fields of live nodes besides this one, the node id key's prefix,
// ttl (ms). 1 when the field is held (for this node) now, 0 when `max` others are; dead nodes' fields are dropped.
const CLAIM = luaScript(`${LIVE}
local entries = redis.call('HGETALL', KEYS[1])
local held = 0
for i = 1, #entries, 2 do
  local field, holder = entries[i], entries[i + 1]
  if field ~= ARGV[1] then
    if holder == ARGV[2] or live(holder, ARGV[4]) then held = held + 1 else redis.call('HDEL', KEYS[1], field) end
  end
end
if held >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`)
// KEYS: the set. ARGV: the field, this node. The field goes if this node holds it.
const UNCLAIM = luaScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
`)

export type NodeMail = NodeRouting & { stop(): Promise<void> }

/** Read this node's stream (on a connection of its own) and answer the routing calls on `redis`. */
export function startNodeMail(url: string, redis: Redis, self: string, { watchdogMs = 5000 } = {}): NodeMail {
  let stopped = false
  let reader = openBlockingRedis(url, 'gw-node-reader')
  reader.on('error', () => {}) // the loop logs an outage once
  let last = '0'
  const run = async () => {
    let failing = false
    while (!stopped) {
      const connection = reader
      let timer: Timer | undefined
      try {
        const reply = await Promise.race([
          connection.xread('COUNT', 100, 'BLOCK', 1000, 'STREAMS', streamKey(self), last),
          new Promise<'deaf'>((resolve) => {
            timer = setTimeout(() => resolve('deaf'), watchdogMs)
          }),
        ])
        if (reply === 'deaf') {
          // A blocking read ioredis will never settle (SCALE-OUT §2): a new connection.
          connection.disconnect()
          reader = openBlockingRedis(url, 'gw-node-reader')
          reader.on('error', () => {})
          continue
        }
        if (failing) log.notice('node messages: reading again')
        failing = false
        for (const [, items] of reply ?? [])
          for (const [id, fields] of items) {
            last = id
            const kind = fields[fields.indexOf('k') + 1]
            let message: unknown
            try {
              message = JSON.parse(fields[fields.indexOf('d') + 1])
            } catch {
              continue
            }
            void receiveNodeMessage(kind, message)
          }
      } catch (error) {
        if (stopped) break
        if (!failing) log.warn('node messages: reading failed, retrying', { error: String(error) })
        failing = true
        await Bun.sleep(100)
      } finally {
        clearTimeout(timer)
      }
    }
  }
  const running = run()

  return {
    self,
    async place(key, ttlMs) {
      return String(await PLACE(redis, [key, ownedKey(self)], [self, ttlMs, PREFIX]))
    },
    async holder(key) {
      const holder = await HOLDER(redis, [key], [PREFIX])
      return typeof holder === 'string' ? holder : undefined
    },
    async keep(key, ttlMs) {
      return Number(await RENEW(redis, [key], [self, ttlMs])) === 1
    },
    async release(key) {
      await RELEASE(redis, [key], [self])
      await redis.hdel(ownedKey(self), key)
    },
    async send(node, kind, message) {
      const key = streamKey(node)
      await redis
        .multi()
        .xadd(key, 'maxlen', '~', STREAM_LENGTH, '*', 'k', kind, 'd', JSON.stringify(message))
        .pexpire(key, STREAM_TTL_MS)
        .exec()
    },
    async fields(key) {
      return await redis.hgetall(key)
    },
    async setField(key, field, value, ttlMs) {
      const batch = redis.multi()
      if (value === null) batch.hdel(key, field)
      else batch.hset(key, field, value)
      await batch.pexpire(key, ttlMs).exec()
    },
    async dropFields(key) {
      await redis.del(key)
    },
    async claim(key, field, max, ttlMs) {
      return Number(await CLAIM(redis, [key], [field, self, max, PREFIX, ttlMs])) === 1
    },
    async unclaim(key, field) {
      await UNCLAIM(redis, [key], [field, self])
    },
    async stop() {
      stopped = true
      reader.disconnect()
      await running
      await redis.del(streamKey(self)).catch(() => {})
    },
  }
}
