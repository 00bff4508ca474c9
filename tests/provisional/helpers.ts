// Provisional accounts for tests: a game backend's call of POST /partner-sdk/token/bot.
import { api, type Reply } from '../helpers'

export type TokenAnswer = {
  access_token: string
  id_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token?: string
  scope: string
}

export async function botToken(
  botToken: string,
  externalUserId: string,
  preferredGlobalName?: string,
): Promise<Reply<TokenAnswer & { code?: number; errors?: any }>> {
  return await api('POST', '/partner-sdk/token/bot', {
    token: `Bot ${botToken}`,
    body: {
      external_user_id: externalUserId,
      ...(preferredGlobalName !== undefined ? { preferred_global_name: preferredGlobalName } : {}),
    },
  })
}

/** A provisional player: its Bearer token and its user id. */
export async function player(app: { bot_token: string }, externalUserId: string, name?: string) {
  const r = await botToken(app.bot_token, externalUserId, name)
  if (r.status !== 200) throw new Error(`provisional token: ${r.status} ${JSON.stringify(r.body)}`)
  const me = await api('GET', '/users/@me', { token: `Bearer ${r.body.access_token}` })
  return { id: me.body.id as string, bearer: `Bearer ${r.body.access_token}`, token: r.body }
}
