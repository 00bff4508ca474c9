// A TLS front for a library that speaks only HTTPS to its REST host (Eris 0.18: node's https.request to
// `rest.domain`, port 443 unless its agent says otherwise), as an operator's reverse proxy would be: a self-signed
// certificate for 127.0.0.1 (made with openssl), and every request passed on to the test server as it came.
import { Agent } from 'node:https'
import { join } from 'node:path'
import { testDir } from '../helpers'

/** Whether a certificate can be made here (openssl installed). */
export const canMakeCertificate = Bun.which('openssl') !== null

export type TlsFront = { port: number; certificate: string; agent: Agent; stop(): void }

/** An HTTPS server on 127.0.0.1 in front of `target` (http://host:port), and an agent that trusts it and goes to it. */
export async function tlsFront(target: string): Promise<TlsFront> {
  const dir = testDir()
  const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')]
  const made = Bun.spawnSync(
    ['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1'].concat([
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]),
    { stdout: 'ignore', stderr: 'pipe' },
  )
  if (made.exitCode !== 0) throw new Error(`openssl: ${made.stderr.toString()}`)
  const certificate = await Bun.file(cert).text()
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    tls: { key: await Bun.file(key).text(), cert: certificate },
    async fetch(request) {
      const url = new URL(request.url)
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer()
      const answer = await fetch(`${target}${url.pathname}${url.search}`, {
        method: request.method,
        headers: request.headers,
        body,
        redirect: 'manual',
      })
      // fetch has decoded the body: it goes on as it is now.
      const headers = new Headers(answer.headers)
      headers.delete('content-encoding')
      headers.delete('content-length')
      return new Response(answer.body, { status: answer.status, headers })
    },
  })
  const agent = new Agent({ ca: certificate, keepAlive: true })
  // node's https.request connects to the agent's default port when the request names none (Eris names none).
  ;(agent as Agent & { defaultPort: number }).defaultPort = server.port!
  return { port: server.port!, certificate, agent, stop: () => void server.stop(true) }
}
