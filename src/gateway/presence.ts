// Who is online on the Gateway: identified sessions counted by key (a user; a user in one application), summed over
// the nodes that hold them. One server counts its own. With several nodes each node counts its own sessions at once
// and tells the others through the log (cluster/presence.ts); a starting node loads the others' counts, and the
// counts of a node that died are dropped. Domains ask `online(key)` synchronously (lobbies/activity.ts).

/** Several nodes: where this node's own changes go besides its own counts (the log). */
export type PresencePort = { readonly node: string; change(key: string, delta: 1 | -1): void }

const ONE_SERVER = ''
let port: PresencePort | undefined
/** key → sessions on every node. */
const total = new Map<string, number>()
/** node → key → sessions on that node. */
const byNode = new Map<string, Map<string, number>>()

function add(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by
  if (n > 0) map.set(key, n)
  else map.delete(key)
}

export function online(key: string): boolean {
  return total.has(key)
}

/** Whether any session is online at all (a cheap check before looking at members one by one). */
export function anyoneOnline(): boolean {
  return total.size > 0
}

/** A session of this node was identified (+1) or ended for good (-1): counted here at once, and told to the others. */
export function countPresence(key: string, delta: 1 | -1): void {
  applyPresence(port?.node ?? ONE_SERVER, key, delta)
  port?.change(key, delta)
}

/** Another node's change, as the log hands it over (this node's own are counted already). */
export function applyPresence(node: string, key: string, delta: number): void {
  let counts = byNode.get(node)
  if (!counts) byNode.set(node, (counts = new Map()))
  add(counts, key, delta)
  if (counts.size === 0) byNode.delete(node)
  add(total, key, delta)
}

/** A node died (or left): its sessions no longer count. */
export function dropPresenceOf(node: string): void {
  const counts = byNode.get(node)
  if (!counts) return
  for (const [key, n] of counts) add(total, key, -n)
  byNode.delete(node)
}

/** The nodes other than this one that hold sessions now. */
export function presenceNodes(): string[] {
  return [...byNode.keys()].filter((node) => node !== (port?.node ?? ONE_SERVER))
}

/** Several nodes from now on (undefined: one server again; other nodes' counts are dropped). */
export function usePresence(next: PresencePort | undefined): void {
  for (const node of presenceNodes()) dropPresenceOf(node)
  const own = byNode.get(port?.node ?? ONE_SERVER)
  byNode.delete(port?.node ?? ONE_SERVER)
  port = next
  if (own) byNode.set(port?.node ?? ONE_SERVER, own)
}
