// Who is calling: a user session, an application's bot, or an OAuth2 grant. IDs only; domains load what they need.
// The domains that own the tokens register how a token resolves (app.ts wires them), so http/ and gateway/
// resolve tokens without importing any domain.

export type UserCaller = { kind: 'user'; userId: string; sessionId: string; sessionIdHash: string }
export type BotCaller = { kind: 'bot'; userId: string; applicationId: string }
export type BearerCaller = { kind: 'bearer'; userId: string; applicationId: string; scopes: string[]; grantId: string }
export type Caller = UserCaller | BotCaller | BearerCaller
export type CallerKind = Caller['kind']

export type TokenResolver<C extends Caller> = (token: string) => C | undefined | Promise<C | undefined>

const resolvers: { user?: TokenResolver<UserCaller>; bot?: TokenResolver<BotCaller>; bearer?: TokenResolver<BearerCaller> } = {}

export function setTokenResolvers(next: typeof resolvers): void {
  Object.assign(resolvers, next)
}

/**
 * Resolve an Authorization value: `Bot <token>`, `Bearer <token>`, or a raw user token.
 * `bare` lets the Gateway accept a token without prefix as Discord does at Identify: a user token first, then a bot
 * token (Discord's libraries send those bare), then an OAuth2 access token.
 */
export async function resolveAuthorization(value: string | null | undefined, { bare = false } = {}): Promise<Caller | undefined> {
  if (!value) return undefined
  const trimmed = value.trim()
  if (trimmed.length === 0 || trimmed.length > 512) return undefined
  const [scheme, rest] = splitScheme(trimmed)
  if (scheme === 'bot') return rest ? resolvers.bot?.(rest) : undefined
  if (scheme === 'bearer') return rest ? resolvers.bearer?.(rest) : undefined
  const user = await resolvers.user?.(trimmed)
  if (user || !bare) return user
  return (await resolvers.bot?.(trimmed)) ?? resolvers.bearer?.(trimmed)
}

function splitScheme(value: string): ['bot' | 'bearer' | 'raw', string] {
  const match = /^(bot|bearer)\s+(.+)$/i.exec(value)
  if (!match) return ['raw', value]
  return [match[1].toLowerCase() as 'bot' | 'bearer', match[2].trim()]
}
