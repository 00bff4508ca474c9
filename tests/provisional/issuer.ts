// A real OIDC issuer for tests: its discovery document and JWKS served over HTTP on 127.0.0.1, RSA and EC keys made
// with jose, ID tokens signed with them. The test turns its endpoints down or slow and rotates its keys.
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose'

type Key = { kid: string; alg: string; privateKey: CryptoKey; jwk: Record<string, unknown> }

export class TestIssuer {
  keys: Key[] = []
  /** What the JWKS endpoint publishes (kids); every key by default. */
  published?: string[]
  discovery: 'ok' | 'missing' | 'wrong-issuer' = 'ok'
  jwks: 'ok' | 'down' | 'slow' | 'garbage' = 'ok'
  slowMs = 5000
  jwksFetches = 0
  private constructor(
    private readonly server: ReturnType<typeof Bun.serve>,
    readonly issuer: string,
  ) {}

  static async start(path = ''): Promise<TestIssuer> {
    let self: TestIssuer | undefined
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: async (request) => self!.answer(new URL(request.url).pathname),
    })
    self = new TestIssuer(server, `http://127.0.0.1:${server.port}${path}`)
    await self.addKey('RS256')
    return self
  }

  async addKey(alg: 'RS256' | 'ES256' | 'EdDSA'): Promise<Key> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
    const kid = `k${this.keys.length + 1}-${alg}`
    const key = { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } }
    this.keys.push(key)
    return key
  }

  private async answer(path: string): Promise<Response> {
    const base = new URL(this.issuer).pathname.replace(/\/$/, '')
    if (path === `${base}/.well-known/openid-configuration`) {
      if (this.discovery === 'missing') return new Response('not here', { status: 404 })
      return Response.json({
        issuer: this.discovery === 'wrong-issuer' ? 'https://elsewhere.example' : this.issuer,
        jwks_uri: `${this.issuer}/keys`,
        id_token_signing_alg_values_supported: ['RS256', 'ES256', 'EdDSA'],
      })
    }
    if (path === `${base}/keys`) {
      this.jwksFetches++
      if (this.jwks === 'down') return new Response('down', { status: 503 })
      if (this.jwks === 'slow') await Bun.sleep(this.slowMs)
      if (this.jwks === 'garbage')
        return new Response('{"keys": 12', { headers: { 'content-type': 'application/json' } })
      const keys = this.keys.filter((k) => !this.published || this.published.includes(k.kid)).map((k) => k.jwk)
      return Response.json({ keys })
    }
    return new Response('no', { status: 404 })
  }

  /** An ID token: `iss` this issuer, `aud` the audience, issued now (the clock given, seconds), an hour long. */
  async token(
    audience: string,
    claims: JWTPayload & { preferred_username?: string } = {},
    options: { key?: Key; now?: number } = {},
  ): Promise<string> {
    const key = options.key ?? this.keys[0]
    const now = Math.floor((options.now ?? Date.now()) / 1000)
    return await new SignJWT({ sub: 'user-1', ...claims })
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
      .setIssuer((claims.iss as string | undefined) ?? this.issuer)
      .setAudience(audience)
      .setIssuedAt((claims.iat as number | undefined) ?? now)
      .setExpirationTime((claims.exp as number | undefined) ?? now + 3600)
      .sign(key.privateKey)
  }

  stop(): void {
    this.server.stop(true)
  }
}
