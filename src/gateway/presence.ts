// Who is online on the Gateway: identified sessions counted by key (a user; a user in one application), summed over
// the nodes that hold them. One server counts its own. With several nodes each node counts its own sessions at once
// and tells the others through the log (cluster/presence.ts); a starting node loads the others' counts, and the
// counts of a node that died are dropped. Domains ask `online(key)` synchronously (lobbies/activity.ts).

import { appState } from '../core/app'

/** Several nodes: where this node's own changes go besides its own counts (the log). */
export type PresencePort = { readonly node: string; change(key: string, delta: 1 | -1): void }

const ONE_SERVER = ''
/** What this module holds per App (core/app.ts). */
const newPresence = () => ({
  port: undefined as PresencePort | undefined,
  /** key → sessions on every node. */
  total: new Map<string, number>(),
  /** node → key → sessions on that node. */
  byNode: new Map<string, Map<string, number>>(),
})
declare module '../core/app' {
  interface AppState {
    presence: ReturnType<typeof newPresence>
  }
}
const held = appState('presence', newPresence)

function add(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by
  if (n > 0) map.set(key, n)
  else map.delete(key)
}

export function online(key: string): boolean {
  return held().total.has(key)
}

/** Whether any session is online at all (a cheap check before looking at members one by one). */
export function anyoneOnline(): boolean {
  return held().total.size > 0
}

/** A session of this node was identified (+1) or ended for good (-1): counted here at once, and told to the others. */
export function countPresence(key: string, delta: 1 | -1): void {
  const st = held()
  applyPresence(st.port?.node ?? ONE_SERVER, key, delta)
  st.port?.change(key, delta)
}

/** Another node's change, as the log hands it over (this node's own are counted already). */
export function applyPresence(node: string, key: string, delta: number): void {
  const st = held()
  let counts = st.byNode.get(node)
  if (!counts) st.byNode.set(node, (counts = new Map()))
  add(counts, key, delta)
  if (counts.size === 0) st.byNode.delete(node)
  add(st.total, key, delta)
}

/** A node died (or left): its sessions no longer count. */
export function dropPresenceOf(node: string): void {
  const st = held()
  const counts = st.byNode.get(node)
  if (!counts) return
  for (const [key, n] of counts) add(st.total, key, -n)
  st.byNode.delete(node)
}

/** The nodes other than this one that hold sessions now. */
export function presenceNodes(): string[] {
  return [...held().byNode.keys()].filter((node) => node !== (held().port?.node ?? ONE_SERVER))
}

/** Several nodes from now on (undefined: one server again; other nodes' counts are dropped). */
export function usePresence(next: PresencePort | undefined): void {
  const st = held()
  for (const node of presenceNodes()) dropPresenceOf(node)
  const own = st.byNode.get(st.port?.node ?? ONE_SERVER)
  st.byNode.delete(st.port?.node ?? ONE_SERVER)
  st.port = next
  if (own) st.byNode.set(st.port?.node ?? ONE_SERVER, own)
}
