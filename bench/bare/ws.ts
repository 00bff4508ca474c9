// Bare baseline for the Gateway: a plain Bun WebSocket server that sends our Hello bytes on open, answers an
// Identify (op 2) with our READY bytes and subscribes the socket to one topic (the bench's base sockets to another),
// acknowledges heartbeats, and on POST /publish publishes our fan-out payload to that topic and answers the bytes our
// POST answered (POST /publish-body: publishes the body it is given).
// Argument: a JSON file { hello, ready, payload?, post?: { status, headers, bodyBase64 } }.
const spec = (await Bun.file(process.argv[2]).json()) as {
  hello: string
  ready: string
  payload?: string
  post?: { status: number; headers: [string, string][]; bodyBase64: string }
}
const postBody = spec.post ? Buffer.from(spec.post.bodyBase64, 'base64') : new Uint8Array()
const ack = JSON.stringify({ op: 11, d: null, s: null, t: null })

const server = Bun.serve<{ topic: string }, never>({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(request, server) {
    // POST /publish-body: publish the request's body itself (the presence row sends each round's bytes).
    if (request.method === 'POST' && new URL(request.url).pathname === '/publish-body') {
      server.publish('lobby', await request.text())
      return new Response(null, { status: 204 })
    }
    if (request.method === 'POST') {
      server.publish('lobby', spec.payload ?? '')
      return new Response(postBody, { status: spec.post?.status ?? 200, headers: spec.post?.headers })
    }
    // The bench's base sockets (`bench=base`) follow another topic, as ours follow another lobby.
    const topic = new URL(request.url).searchParams.get('bench') === 'base' ? 'base' : 'lobby'
    if (server.upgrade(request, { data: { topic } })) return
    return new Response('upgrade required', { status: 426 })
  },
  websocket: {
    idleTimeout: 0,
    open(ws) {
      ws.send(spec.hello)
    },
    message(ws, message) {
      const op = (JSON.parse(String(message)) as { op: number }).op
      if (op === 2) {
        ws.subscribe(ws.data.topic)
        ws.send(spec.ready)
      } else if (op === 1) ws.send(ack)
    },
  },
})
console.log(`port ${server.port}`)

export {}
