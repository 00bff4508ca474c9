// Lobby test setup: an application, users with lobbies.write bearer tokens, and a lobby helper.
import { api, makeApp, makeUser } from '../helpers'
import { bearerFor } from '../oauth2/helpers'

export type Player = { id: string; token: string; bearer: string }

export async function setup(players = 2, scope = 'identify lobbies.write') {
  const app = await makeApp()
  const bot = `Bot ${app.bot_token}`
  const list: Player[] = []
  for (let i = 0; i < players; i++) {
    const user = await makeUser()
    list.push({ ...user, bearer: await bearerFor(user, app, scope) })
  }
  return { app, bot, players: list }
}

export async function createLobby(bot: string, body: Record<string, unknown> = {}) {
  const r = await api('POST', '/lobbies', { token: bot, body })
  if (r.status !== 201) throw new Error(`create lobby: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body as {
    id: string
    application_id: string
    members: { id: string; metadata: unknown; flags: number }[]
    metadata: unknown
    flags: number
  }
}

/** A map with n keys, each key and value of the given length. */
export function metadata(n: number, keyLength = 8, valueLength = 8): Record<string, string> {
  const out: Record<string, string> = {}
  for (let i = 0; i < n; i++) out[String(i).padStart(keyLength, 'k')] = 'v'.repeat(valueLength)
  return out
}
