// OAuth2 for games (public clients, no secret in the game): the authorize URL with PKCE (S256) and a state, the code
// exchanged with its verifier, refresh with rotation (each refresh token works once; the server ends the whole grant
// when a used one comes back), and a callback before the access token expires, whose refreshed token the client
// takes with updateToken() (the Gateway keeps its socket). An OAuth2 error body ({error, error_description}) is an
// ApiError whose message says both.
import type { Client } from './client'
import { ApiError } from './errors'

export type OAuth2Tokens = {
  accessToken: string
  refreshToken?: string
  /** When the access token stops working (ms since the epoch). */
  expiresAt: number
  scope: string[]
}

export type AuthorizeOptions = {
  clientId: string
  redirectUri: string
  scope: string | string[]
  /** Random when left out. */
  state?: string
  /** 'consent' asks again even when the user approved before; 'none' never shows the page. */
  prompt?: 'consent' | 'none'
  /** Where the server's pages are (its WEB_URL); default the client's baseUrl. */
  webUrl?: string
}

/** What the game keeps between the authorize URL and the redirect: the state to compare, the verifier to send. */
export type AuthorizeRequest = {
  url: string
  state: string
  codeVerifier: string
  redirectUri: string
  clientId: string
}

/** Called `before` seconds ahead of the access token's expiry, with the tokens that are about to expire. */
export type TokenExpiringCallback = (tokens: OAuth2Tokens) => void | Promise<void>

type TokenAnswer = { access_token: string; refresh_token?: string; expires_in: number; scope: string }
type Timer = ReturnType<typeof setTimeout> & { unref?: () => void }

const b64url = (bytes: ArrayBuffer | Uint8Array) => {
  let text = ''
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte)
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}
const random = (bytes: number) => b64url(crypto.getRandomValues(new Uint8Array(bytes)))

export class OAuth2 {
  /** The tokens of the last exchange or refresh (the access token is also the client's Bearer token). */
  tokens?: OAuth2Tokens
  /** The application the tokens are for (set by exchangeCode, used by refresh). */
  clientId?: string
  #expiring?: { callback: TokenExpiringCallback; before: number }
  #timer?: Timer

  constructor(protected readonly client: Client) {}

  /** The consent page URL with PKCE (S256) and a state; keep the answer until the redirect comes back. */
  async authorizeUrl(options: AuthorizeOptions): Promise<AuthorizeRequest> {
    const codeVerifier = random(48) // 64 characters of [A-Za-z0-9-_], within RFC 7636's 43-128
    const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(codeVerifier)))
    const state = options.state ?? random(16)
    const query = new URLSearchParams({
      client_id: options.clientId,
      response_type: 'code',
      redirect_uri: options.redirectUri,
      scope: Array.isArray(options.scope) ? options.scope.join(' ') : options.scope,
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...(options.prompt ? { prompt: options.prompt } : {}),
    })
    const base = (options.webUrl ?? this.client.baseUrl).replace(/\/+$/, '')
    return {
      url: `${base}/oauth2/authorize?${query}`,
      state,
      codeVerifier,
      redirectUri: options.redirectUri,
      clientId: options.clientId,
    }
  }

  /**
   * The redirect the consent page sent the browser to: its code, once its state is the request's (else an ApiError
   * 400: a forged or crossed redirect). A denial (`error=access_denied`) is an ApiError 403.
   */
  parseRedirect(redirectUrl: string, request: Pick<AuthorizeRequest, 'state'>): string {
    const params = new URL(redirectUrl).searchParams
    const error = params.get('error')
    if (error) throw new ApiError(403, 0, `${error}: ${params.get('error_description') ?? 'the user said no'}`)
    if (params.get('state') !== request.state) throw new ApiError(400, 0, 'The redirect state is not the request’s.')
    const code = params.get('code')
    if (!code) throw new ApiError(400, 0, 'The redirect carries no code.')
    return code
  }

  /**
   * Exchange the code (with the request's verifier) for tokens: the access token becomes the client's Bearer token,
   * and the expiry callback is set for it. Given the redirect URL, its state must be the request's (parseRedirect);
   * given a bare code, the app compared the state itself.
   */
  async exchangeCode(
    request: Pick<AuthorizeRequest, 'codeVerifier' | 'redirectUri' | 'clientId'> & { state?: string },
    codeOrRedirectUrl: string,
  ): Promise<OAuth2Tokens> {
    let code = codeOrRedirectUrl
    if (/^[a-z][a-z0-9+.-]*:/i.test(codeOrRedirectUrl)) {
      if (request.state === undefined)
        throw new TypeError('exchangeCode(request, redirectUrl): the request has no state')
      code = this.parseRedirect(codeOrRedirectUrl, { state: request.state })
    }
    this.clientId = request.clientId
    return this.#token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: request.redirectUri,
      code_verifier: request.codeVerifier,
      client_id: request.clientId,
    })
  }

  /**
   * A new access token for the refresh token (default: the last one), which is spent: the answer brings the next one
   * (kept in `tokens`). A refresh token used twice ends the grant: both tokens stop working (ApiError invalid_grant).
   */
  async refresh(options: { refreshToken?: string; clientId?: string } = {}): Promise<OAuth2Tokens> {
    const refreshToken = options.refreshToken ?? this.tokens?.refreshToken
    const clientId = options.clientId ?? this.clientId
    if (!refreshToken || !clientId)
      throw new TypeError('refresh(): no refresh token or client id (exchange a code first)')
    this.clientId = clientId
    return this.#token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId })
  }

  /** Revoke the grant (the access and refresh tokens); the client forgets its Bearer token. */
  async revoke(): Promise<void> {
    const token = this.tokens?.refreshToken ?? this.tokens?.accessToken
    if (token && this.clientId)
      await this.#call('/oauth2/token/revoke', { token, client_id: this.clientId }).catch((error) => {
        if (!(error instanceof ApiError) || error.status >= 500) throw error
      })
    this.#clear()
    if (this.client.tokenKind === 'Bearer') this.client.setToken(null)
  }

  /**
   * Be told `before` seconds (default 300) ahead of the access token's expiry, e.g. to refresh() (the refreshed token
   * is the client's at once; a connected Gateway keeps its socket). null: no callback. As the Social SDK's
   * SetTokenExpirationCallback.
   */
  setTokenExpirationCallback(callback: TokenExpiringCallback | null, options: { before?: number } = {}): void {
    this.#expiring = callback ? { callback, before: options.before ?? 300 } : undefined
    this.#schedule()
  }

  /** The same as setTokenExpirationCallback; returns a function that removes it. */
  onTokenExpiring(callback: TokenExpiringCallback, options: { before?: number } = {}): () => void {
    this.setTokenExpirationCallback(callback, options)
    return () => {
      if (this.#expiring?.callback === callback) this.setTokenExpirationCallback(null)
    }
  }

  /** Tokens from elsewhere (a saved session): the Bearer token, the refresh token and the expiry callback's time. */
  useTokens(tokens: OAuth2Tokens, clientId?: string): void {
    this.tokens = tokens
    if (clientId) this.clientId = clientId
    this.client.updateToken(tokens.accessToken, 'Bearer')
    this.#schedule()
  }

  /** Stop the expiry timer (Client.close does not know it: call it when the game shuts the client down). */
  dispose(): void {
    this.#clear()
  }

  #clear(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #schedule(): void {
    this.#clear()
    const tokens = this.tokens
    const expiring = this.#expiring
    if (!tokens || !expiring) return
    const delay = Math.max(0, tokens.expiresAt - expiring.before * 1000 - Date.now())
    // setTimeout holds 2^31 - 1 ms at most (24.8 days): a later expiry is looked at again then.
    const timer = setTimeout(
      () => {
        if (delay > 2 ** 31 - 1) return this.#schedule()
        if (this.tokens === tokens) void Promise.resolve(expiring.callback(tokens)).catch(() => {})
      },
      Math.min(delay, 2 ** 31 - 1),
    ) as Timer
    timer.unref?.() // the callback alone does not keep a Bun or Node process alive
    this.#timer = timer
  }

  async #token(form: Record<string, string>): Promise<OAuth2Tokens> {
    const answer = (await this.#call('/oauth2/token', form)) as TokenAnswer
    const tokens: OAuth2Tokens = {
      accessToken: answer.access_token,
      refreshToken: answer.refresh_token,
      expiresAt: Date.now() + answer.expires_in * 1000,
      scope: answer.scope ? answer.scope.split(' ') : [],
    }
    this.useTokens(tokens)
    return tokens
  }

  /** A form POST to a token endpoint; an OAuth2 error body as an ApiError that names it. */
  async #call(path: '/oauth2/token' | '/oauth2/token/revoke', form: Record<string, string>): Promise<unknown> {
    try {
      return await this.client.rest.request('POST', path, { form, auth: false })
    } catch (error) {
      const body = error instanceof ApiError ? error.body : undefined
      if (error instanceof ApiError && typeof body?.error === 'string') {
        const description = typeof body.error_description === 'string' ? `: ${body.error_description}` : ''
        throw new ApiError(error.status, 0, `${body.error}${description}`, body, undefined, 'POST', path)
      }
      throw error
    }
  }
}
