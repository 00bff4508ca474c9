// In-process recording connections for event tests: they identify through the domains' identify hooks, join
// app: topics like the real Gateway, see what their caller sees (gateway/bus.ts sees), and record what is published to them. Every call is also passed on
// to the real Gateway's bus, so sockets of other test files in the same process keep working.
import type { Caller } from '../../src/core/caller'
import { sees, installBus, type GatewayConnection, wiring } from '../../src/gateway/bus'
import { Serialized } from '../../src/gateway/protocol'
import { bus as realBus } from '../../src/gateway/dispatch'

/** What a socket would parse: a payload serialized once for many sessions is read back. */
const parsed = (data: unknown) => (data instanceof Serialized ? JSON.parse(data.json) : structuredClone(data))

type Conn = GatewayConnection & { topics: Set<string>; received: { t: string; d: any }[] }

const conns = new Set<Conn>()
let n = 0

/** Passes every call on to the real Gateway's bus, and records for the fake connections. */
const fakeBus: Parameters<typeof installBus>[0] = {
  publish(to, type, data) {
    realBus.publish(to, type, data)
    const list = Array.isArray(to) ? to : [to]
    for (const c of conns) if (list.some((t) => c.topics.has(t))) c.received.push({ t: type, d: parsed(data) })
  },
  publishToUser(userId, audience, type, data) {
    realBus.publishToUser(userId, audience, type, data)
    for (const c of conns)
      if (c.caller.userId === userId && sees(c.caller, audience)) c.received.push({ t: type, d: parsed(data) })
  },
  subscribeUser(userId, topic, audience) {
    realBus.subscribeUser(userId, topic, audience)
    for (const c of conns) if (c.caller.userId === userId && sees(c.caller, audience)) c.topics.add(topic)
  },
  unsubscribeUser(userId, topic) {
    realBus.unsubscribeUser(userId, topic)
    for (const c of conns) if (c.caller.userId === userId) c.topics.delete(topic)
  },
  subscribeUsers(userIds, topics, audience) {
    realBus.subscribeUsers(userIds, topics, audience)
    for (const c of conns)
      if (userIds.includes(c.caller.userId) && sees(c.caller, audience)) for (const t of topics) c.topics.add(t)
  },
  unsubscribeUsers(userIds, topics) {
    realBus.unsubscribeUsers(userIds, topics)
    for (const c of conns) if (userIds.includes(c.caller.userId)) for (const t of topics) c.topics.delete(t)
  },
  closeAuthSession: (id, code, reason) => realBus.closeAuthSession(id, code, reason),
  closeUser: (id, code, reason) => realBus.closeUser(id, code, reason),
  closeGrants: (userId, which, code, reason) => realBus.closeGrants(userId, which, code, reason),
  changeAuthSession: (id, next) => realBus.changeAuthSession(id, next),
}

export async function connect(caller: Caller) {
  // In place of the service's bus (the server installs its own when it starts: after this file is imported).
  installBus(fakeBus)
  n += 1
  const topics = new Set<string>()
  if (caller.kind === 'bot') topics.add(`app:${caller.applicationId}`)
  for (const hook of wiring().identifyHooks) for (const t of (await hook(caller)).topics ?? []) topics.add(t)
  const conn: Conn = { caller, sessionId: `fake-${n}`, topics, received: [], send() {} }
  conns.add(conn)
  for (const hook of wiring().sessionStartHooks) await hook(conn)
  return {
    conn,
    types: () => conn.received.map((e) => e.t),
    events: (type: string) => conn.received.filter((e) => e.t === type).map((e) => e.d),
    clear: () => (conn.received.length = 0),
    op: (op: number, d: unknown) => wiring().opHandlers.get(op)?.(conn, d),
    async close() {
      conns.delete(conn)
      for (const hook of wiring().sessionEndHooks) await hook(conn)
    },
  }
}
