// The OAuth2 scopes this server knows. An unknown scope is refused (invalid_scope), never silently dropped.

const KNOWN_SCOPES = [
  'identify',
  'email',
  'guilds',
  'connections',
  'gateway.connect',
  'lobbies.write',
  'relationships.read',
  'relationships.write',
  // Discord's Social SDK scope; it carries identify, lobbies.write, gateway.connect and the relationships scopes (see
  // grantedScopes).
  'sdk.social_layer',
  // Adding the application's bot to a guild (the consent's; authorize.ts): never asked of the token endpoint.
  'bot',
  'applications.commands',
] as const

/** The scopes of the bot flow: alone they need no response_type nor redirect_uri (authorize.ts). */
export const INSTALL_SCOPES: readonly string[] = ['bot', 'applications.commands']

/** Split a space-separated scope string; undefined when any scope is unknown or none is given. */
export function parseScopes(value: string | undefined | null): string[] | undefined {
  if (typeof value !== 'string') return undefined
  const scopes = [...new Set(value.split(/[\s+]+/).filter(Boolean))]
  if (scopes.length === 0) return undefined
  if (!scopes.every((s) => (KNOWN_SCOPES as readonly string[]).includes(s))) return undefined
  return scopes
}

/** What a grant allows: its scopes plus those another scope implies. */
export function grantedScopes(stored: string): string[] {
  const scopes = stored.split(' ').filter(Boolean)
  if (scopes.includes('sdk.social_layer')) {
    for (const implied of ['identify', 'lobbies.write', 'gateway.connect', 'relationships.read', 'relationships.write'])
      if (!scopes.includes(implied)) scopes.push(implied)
  }
  return scopes
}
