// OAuth2 for games: PKCE authorize URL, code exchange, refresh with rotation. Filled by the accounts part of the SDK.
import type { Client } from './client'

export class OAuth2 {
  constructor(protected readonly client: Client) {}
}
