// A round-robin TCP load balancer in the test process, in front of a cluster's nodes as an operator puts one: each
// client connection is piped both ways to the next node of the rotation, bytes as they come. A node that refuses the
// connection is skipped for the next one; so is one that closes it before answering a GET (what nginx's
// proxy_next_upstream and HAProxy's retry-on do: a node dying, SIGKILL, still accepts connections for a moment, and
// a request it never answered can be sent to another). Nothing is parsed but the start of what the client sends, to
// tell a Gateway upgrade (`GET /gateway…`) from REST calls: a client may send it on a connection its REST calls kept
// alive (discord.py's aiohttp does). The test takes a node out of the rotation before it stops it, as an operator
// does, and may hold Gateway upgrades for a while (a slow balancer) to be sure of what happens meanwhile.
import type { Socket } from 'bun'

/** Bytes for one socket, kept while it cannot take them (its `drain` writes them). */
class Writer {
  private queue: Uint8Array[] = []
  private ending = false

  /** `socket`: undefined while the bytes must wait (not connected yet, or held). */
  constructor(private readonly socket: () => Socket<unknown> | undefined) {}

  write(bytes: Uint8Array): void {
    const socket = this.socket()
    if (!socket || this.queue.length > 0) {
      this.queue.push(bytes.slice())
      return
    }
    const written = socket.write(bytes)
    if (written < bytes.length) this.queue.push(bytes.slice(Math.max(written, 0)))
  }

  flush(): void {
    const socket = this.socket()
    if (!socket) return
    while (this.queue.length > 0) {
      const bytes = this.queue[0]
      const written = socket.write(bytes)
      if (written < bytes.length) {
        this.queue[0] = bytes.slice(Math.max(written, 0))
        return
      }
      this.queue.shift()
    }
    if (this.ending) socket.end()
  }

  /** End the socket once what is queued is written. */
  end(): void {
    this.ending = true
    this.flush()
  }

  /** Send these (all that was sent or queued) again, to a new socket. */
  restart(bytes: Uint8Array[]): void {
    this.queue = [...bytes]
  }
}

const GET = [...new TextEncoder().encode('GET ')]
const GATEWAY_UPGRADE = [...new TextEncoder().encode('GET /gateway')]
const startsWith = (bytes: Uint8Array, prefix: number[]) => prefix.every((c, i) => bytes[i] === c)

/** One client connection and the node it went to. */
export class Link {
  /** The node's port, once connected. */
  port?: number
  connecting = false
  upstream?: Socket<unknown>
  closed = false
  /** It carries a Gateway socket (its client asked for the upgrade). */
  gateway = false
  /** Its Gateway upgrade waits (`hold`). */
  held = false
  /** What the client sent until the node first answered, while it may be sent to another node (a GET). */
  unanswered?: Uint8Array[] = []
  readonly toUpstream = new Writer(() => (this.held ? undefined : this.upstream))
  readonly toClient: Writer

  constructor(readonly client: Socket<Link>) {
    this.toClient = new Writer(() => client as Socket<unknown>)
  }
}

export type Balancer = {
  port: number
  url: string
  /** The nodes' ports in rotation. */
  rotation: number[]
  /** Client connections still open. */
  links: Set<Link>
  /** Connections that carry a Gateway socket (their upgrade sent on), still open. */
  gatewayLinks(): Link[]
  /** While held, Gateway upgrades wait (their request and what follows it unsent); `release` sends them on. */
  hold(): void
  release(): void
  /** Gateway upgrades waiting while held. */
  held(): Link[]
  stop(): void
}

export function startBalancer(): Balancer {
  let turn = 0
  let holding = false
  const waiting: Link[] = []
  const links = new Set<Link>()

  /** Connect a link to the next node that accepts it (not one of `tried`); none: the client is cut off. */
  async function connect(link: Link, tried = new Set<number>()): Promise<void> {
    while (!link.closed) {
      const choices = balancer.rotation.filter((p) => !tried.has(p))
      if (choices.length === 0) break
      const port = choices[turn++ % choices.length]
      tried.add(port)
      // Its close (or error) is handled once, and only while it is the link's node.
      let ended = false
      let connected: Socket<unknown> | undefined
      const end = () => {
        if (ended) return
        ended = true
        if (connected && link.upstream === connected) closed(link, tried)
      }
      try {
        connected = (await Bun.connect({
          hostname: '127.0.0.1',
          port,
          socket: {
            data(_, bytes) {
              link.unanswered = undefined
              link.toClient.write(bytes)
            },
            drain: () => link.toUpstream.flush(),
            close: end,
            error: end,
            connectError: () => {},
          },
        })) as Socket<unknown>
      } catch {
        continue // refused: the next node
      }
      if (link.closed) {
        connected.end()
        return
      }
      if (ended) continue // closed at once: the next node
      link.port = port
      link.upstream = connected
      link.toUpstream.flush()
      return
    }
    link.toClient.end()
  }

  /** The node closed the link: the client too, unless its GET was not answered yet (then the next node). */
  function closed(link: Link, tried: Set<number>): void {
    link.upstream = undefined
    if (link.closed || !link.unanswered) return link.toClient.end()
    link.toUpstream.restart(link.unanswered)
    void connect(link, tried)
  }

  const server = Bun.listen<Link>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        const link = new Link(client)
        client.data = link
        links.add(link)
      },
      data(client, bytes) {
        const link = client.data
        if (!link.connecting && !startsWith(bytes, GET)) link.unanswered = undefined // not sent twice
        link.unanswered?.push(bytes.slice())
        // A request begins where the previous answer ended: at the start of what the client sends next.
        if (!link.gateway && startsWith(bytes, GATEWAY_UPGRADE)) {
          link.gateway = true
          if (holding) {
            link.held = true
            waiting.push(link)
          }
        }
        link.toUpstream.write(bytes)
        if (!link.connecting) {
          link.connecting = true
          void connect(link)
        }
      },
      drain: (client) => client.data.toClient.flush(),
      close(client) {
        const link = client.data
        link.closed = true
        links.delete(link)
        link.toUpstream.end()
      },
      error(client) {
        client.end()
      },
    },
  })

  const balancer: Balancer = {
    port: server.port,
    url: `http://127.0.0.1:${server.port}`,
    rotation: [],
    links,
    gatewayLinks: () => [...links].filter((l) => l.gateway && !l.held && l.port !== undefined),
    hold() {
      holding = true
    },
    release() {
      holding = false
      for (const link of waiting.splice(0)) {
        link.held = false
        link.toUpstream.flush()
      }
    },
    held: () => waiting.filter((l) => !l.closed),
    stop() {
      for (const link of links) link.client.end()
      server.stop(true)
    },
  }
  return balancer
}
