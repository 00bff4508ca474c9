// A desktop remote-auth client for tests, doing its own RSA with node:crypto: RSA-2048 key, SPKI in base64,
// RSA-OAEP-SHA256 decryption of what the server sends, and either nonce proof.
import { constants, createHash, generateKeyPairSync, privateDecrypt, type KeyObject } from 'node:crypto'
import { server } from '../helpers'

export type RaFrame = { op: string; [field: string]: any }

export class DesktopClient {
  readonly frames: RaFrame[] = []
  readonly privateKey: KeyObject
  readonly spki: Buffer
  closed: { code: number; reason: string } | null = null
  private waiters: { match: (f: RaFrame) => boolean; resolve: (f: RaFrame) => void }[] = []
  private closeWaiters: ((c: { code: number; reason: string }) => void)[] = []
  private beat?: Timer

  private constructor(
    readonly ws: WebSocket,
    keys: { privateKey: KeyObject; publicKey: KeyObject },
  ) {
    this.privateKey = keys.privateKey
    this.spki = keys.publicKey.export({ type: 'spki', format: 'der' })
  }

  static newKeys(modulusLength = 2048) {
    return generateKeyPairSync('rsa', { modulusLength })
  }

  /** Open /remote-auth (query `?v=2` unless given); waits for the socket to open, not for hello. */
  static async open(
    options: {
      query?: string
      headers?: Record<string, string>
      keys?: { privateKey: KeyObject; publicKey: KeyObject }
      /** A server of its own (a node of a cluster); the in-process test server otherwise. */
      port?: number
    } = {},
  ): Promise<DesktopClient> {
    const port = options.port ?? (await server()).port
    const ws = new WebSocket(`ws://127.0.0.1:${port}/remote-auth${options.query ?? '?v=2'}`, {
      headers: options.headers,
    } as never)
    const client = new DesktopClient(ws, options.keys ?? DesktopClient.newKeys())
    ws.onmessage = (event) => client.receive(JSON.parse(String(event.data)))
    ws.onclose = (event) => client.onClosed(event.code, event.reason)
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve()
      ws.onerror = () => reject(new Error('websocket error'))
    })
    return client
  }

  /** Open and wait for hello. */
  static async connect(options: Parameters<typeof DesktopClient.open>[0] = {}): Promise<DesktopClient> {
    const client = await DesktopClient.open(options)
    await client.waitFor('hello')
    return client
  }

  /** Connect, init, prove (`nonce` or legacy `proof`), and wait for pending_remote_init. */
  static async ready(
    form: 'nonce' | 'proof' = 'nonce',
    options: Parameters<typeof DesktopClient.open>[0] = {},
  ): Promise<DesktopClient> {
    const client = await DesktopClient.connect(options)
    await client.handshake(form)
    return client
  }

  get fingerprint(): string {
    return createHash('sha256').update(this.spki).digest('base64url')
  }

  get encodedPublicKey(): string {
    return this.spki.toString('base64')
  }

  decrypt(base64: string): Buffer {
    return privateDecrypt(
      { key: this.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
      Buffer.from(base64, 'base64'),
    )
  }

  async handshake(form: 'nonce' | 'proof' = 'nonce'): Promise<RaFrame> {
    this.send({ op: 'init', encoded_public_key: this.encodedPublicKey })
    const challenge = await this.waitFor('nonce_proof')
    const nonce = this.decrypt(challenge.encrypted_nonce)
    if (form === 'nonce') this.send({ op: 'nonce_proof', nonce: nonce.toString('base64url') })
    else this.send({ op: 'nonce_proof', proof: createHash('sha256').update(nonce).digest('base64url') })
    return this.waitFor('pending_remote_init')
  }

  private receive(frame: RaFrame) {
    this.frames.push(frame)
    for (const w of [...this.waiters]) {
      if (w.match(frame)) {
        this.waiters.splice(this.waiters.indexOf(w), 1)
        w.resolve(frame)
      }
    }
  }

  private onClosed(code: number, reason: string) {
    clearInterval(this.beat)
    this.closed = { code, reason }
    for (const w of this.closeWaiters) w(this.closed)
  }

  send(frame: unknown) {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame))
  }

  /** The first frame with this op, already received or still to come. */
  waitFor(op: string, timeoutMs = 3000): Promise<RaFrame> {
    const already = this.frames.find((f) => f.op === op)
    if (already) return Promise.resolve(already)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no ${op} within ${timeoutMs} ms; got ${JSON.stringify(this.frames.map((f) => f.op))}`)),
        timeoutMs,
      )
      this.waiters.push({ match: (f) => f.op === op, resolve: (f) => (clearTimeout(timer), resolve(f)) })
    })
  }

  /** Wait until `count` frames with this op have arrived. */
  async waitForCount(op: string, count: number, timeoutMs = 3000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (this.frames.filter((f) => f.op === op).length < count) {
      if (Date.now() > deadline) throw new Error(`fewer than ${count} ${op} within ${timeoutMs} ms`)
      await Bun.sleep(10)
    }
  }

  ops(): string[] {
    return this.frames.map((f) => f.op)
  }

  waitForClose(timeoutMs = 3000): Promise<{ code: number; reason: string }> {
    if (this.closed) return Promise.resolve(this.closed)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`socket not closed within ${timeoutMs} ms; got ${JSON.stringify(this.ops())}`)),
        timeoutMs,
      )
      this.closeWaiters.push((c) => (clearTimeout(timer), resolve(c)))
    })
  }

  close(code = 1000) {
    clearInterval(this.beat)
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(code)
  }
}
