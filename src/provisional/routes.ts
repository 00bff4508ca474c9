// The Social SDK's provisional account endpoints (Discord's "Using Provisional Accounts"): a game backend's Bot token
// for its player's id, or an external credential (exchange.ts). Both answer a provisional account's Bearer token.
import { endpoint } from '../http/endpoint'
import { json } from '../http/respond'
import { tokenForIdentity } from './accounts'
import { exchange } from './exchange'
import { BotTokenSchema, ExchangeSchema, ProvisionalTokenAnswer } from './schemas'

// Tokens are not to be cached (RFC 6749 5.1), as the OAuth2 token endpoint says.
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' }
const tag = 'partner-sdk'

export const provisionalEndpoints = [
  endpoint(
    {
      method: 'POST',
      path: '/partner-sdk/token/bot',
      auth: 'bot',
      tag,
      summary: "A provisional account's token for the game's player id (made on the first call)",
      body: BotTokenSchema,
      answers: { 200: ProvisionalTokenAnswer },
      // Per application: a game's backend asks once per player session.
      limit: { limit: 500, windowMs: 1000 },
      // Answered by Bun's router (http/lane.ts): a game's launch asks for every player at once.
      hot: true,
    },
    async ({ caller, body }) => {
      const name = body.preferred_global_name?.trim()
      const issued = await tokenForIdentity(
        caller.applicationId,
        { applicationId: caller.applicationId, kind: 'bot', issuer: '', subject: body.external_user_id },
        name || undefined,
      )
      return json(issued, 200, NO_STORE)
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/partner-sdk/token',
      auth: null,
      tag,
      summary: "A provisional account's token for an external credential (OIDC ID token, a bot-issued token)",
      body: ExchangeSchema,
      answers: { 200: ProvisionalTokenAnswer },
    },
    async ({ body }) => json(await exchange(body), 200, NO_STORE),
  ),
]
