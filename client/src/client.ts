// The Client: one server, one token, and the modules that use them (rest, auth, gateway, lobbies, oauth2, remoteAuth).
import { Auth, type ElevationHandler } from './auth'
import { Rest, type RestOptions } from './rest'
import { Gateway, type GatewayOptions } from './gateway'
import { Lobbies } from './lobbies'
import { Relationships } from './relationships'
import { OAuth2 } from './oauth2'
import { RemoteAuth } from './remote-auth'
import { authorization, memoryTokenStore, type StoredToken, type TokenKind, type TokenStore } from './tokens'

export type ClientOptions = Omit<RestOptions, 'baseUrl'> & {
  /** The server, e.g. https://lobbies.example.com. In a page served by the server itself, its origin is the default. */
  baseUrl?: string
  /** A token to start with (`Bearer …` / `Bot …` prefixes are read as the kind). */
  token?: string
  /** Where the token is kept: memory by default; `localStorageTokenStore()` for pages. */
  tokenStore?: TokenStore
  /** Answers a 60003 (elevation): a method and its code (proved by the SDK), or the JWT of a proved factor. */
  onMfaRequired?: ElevationHandler
  gateway?: GatewayOptions
}

/** Splits `Bearer x` / `Bot x` into the kind and the token. */
function parseToken(token: string, kind?: TokenKind): StoredToken {
  const prefixed = /^(Bearer|Bot) (.+)$/.exec(token)
  return prefixed && kind === undefined ? { token: prefixed[2], kind: prefixed[1] as TokenKind } : { token, kind }
}

export class Client {
  readonly rest: Rest
  readonly tokenStore: TokenStore
  readonly auth: Auth
  readonly gateway: Gateway
  readonly lobbies: Lobbies
  /** Friends (Discord-wide and the game's), the unified friends list, presences, game invites. */
  readonly relationships: Relationships
  readonly oauth2: OAuth2
  readonly remoteAuth: RemoteAuth
  private readonly tokenListeners = new Set<(token: StoredToken | null) => void>()

  constructor(options: ClientOptions = {}) {
    const baseUrl = options.baseUrl ?? (globalThis as { location?: { origin?: string } }).location?.origin
    if (!baseUrl) throw new TypeError('new Client({ baseUrl }): the server URL is required outside a page')
    this.rest = new Rest({ ...options, baseUrl })
    this.tokenStore = options.tokenStore ?? memoryTokenStore()
    if (options.token !== undefined) this.tokenStore.set(parseToken(options.token))
    this.rest.authorization = () => authorization(this.tokenStore.get())
    this.auth = new Auth(this, options.onMfaRequired)
    this.gateway = new Gateway(this, options.gateway)
    this.lobbies = new Lobbies(this)
    this.relationships = new Relationships(this)
    this.oauth2 = new OAuth2(this)
    this.remoteAuth = new RemoteAuth(this)
  }

  get baseUrl(): string {
    return this.rest.baseUrl
  }

  /** The current token (without its kind), or undefined. */
  get token(): string | undefined {
    return this.tokenStore.get()?.token
  }

  /** 'Bearer' (OAuth2), 'Bot', or undefined (a user's session token, sent bare as Discord's clients send it). */
  get tokenKind(): TokenKind {
    return this.tokenStore.get()?.kind
  }

  /** The Authorization header the token makes. */
  get authorization(): string | undefined {
    return authorization(this.tokenStore.get())
  }

  /**
   * Use another token from now on (null: none). A live Gateway session keeps its socket: the new token is what the
   * next resume or identify sends (as the Social SDK's UpdateToken).
   */
  setToken(token: string | null, kind?: TokenKind): void {
    const stored = token ? parseToken(token, kind) : null
    this.tokenStore.set(stored)
    for (const listener of this.tokenListeners) listener(stored)
  }

  /** Same as setToken: named after the Social SDK's UpdateToken (a refreshed token, the Gateway kept). */
  updateToken(token: string, kind?: TokenKind): void {
    this.setToken(token, kind)
  }

  /** Called on every setToken (the modules that hold sessions listen). */
  onTokenChange(listener: (token: StoredToken | null) => void): () => void {
    this.tokenListeners.add(listener)
    return () => this.tokenListeners.delete(listener)
  }

  /** Close the Gateway and everything live; the token stays in its store. */
  async close(): Promise<void> {
    this.lobbies.closeAll()
    await this.gateway.close()
  }
}
