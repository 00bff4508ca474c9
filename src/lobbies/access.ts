// Who may act on a lobby: its own application (Bot or OAuth2 token of that application); OAuth2 callers
// additionally as members where they act through their membership. The server's web client (a first-party OAuth2
// token, oauth2/first-party.ts) acts as a member in any application's lobby, but only on the routes that say
// `asMember` (read the lobby, its messages, post, leave): never as the lobby's application. Anything else sees 404
// Unknown Lobby.
import type { BearerCaller, BotCaller, Caller } from '../core/caller'
import { Errors } from '../core/errors'
import { isSnowflake } from '../core/snowflake'
import { inWriteTransaction } from '../db/client'
import { cachedLobby } from './store'
import { cachedLobbyWithMembers, cachedMember, getMember } from './members-store'
import type { LobbyMemberRow, LobbyRow } from './tables'

export type AppCaller = BotCaller | BearerCaller

export function appCaller(caller: Caller): AppCaller {
  if (caller.kind === 'user') throw Errors.botsOnly()
  return caller
}

/**
 * The lobby, if the caller may act on it. An OAuth2 caller's membership is its row, read (`firstLookCached`: from the
 * cached member list outside a transaction, for a route that asks again inside the transaction its write stands on):
 * a removal committed through another node reaches this node's cache only once its invalidation is relayed (Redis
 * away: not until it is back), and a removed member must not act through here meanwhile.
 */
export async function lobbyOf(
  caller: Caller,
  lobbyId: string,
  { bearerMustBeMember = true, firstLookCached = false, asMember = false } = {},
): Promise<LobbyRow> {
  const c = appCaller(caller)
  const lobby = isSnowflake(lobbyId) ? await cachedLobby(lobbyId) : undefined
  const crossing = asMember && isFirstParty(c)
  if (!lobby || (lobby.applicationId !== c.applicationId && !crossing)) throw Errors.unknownLobby()
  if (c.kind !== 'bearer' || (!bearerMustBeMember && !crossing)) return lobby
  const member =
    firstLookCached && !inWriteTransaction() ? cachedMember(lobby.id, c.userId) : getMember(lobby.id, c.userId)
  if (!(await member)) throw Errors.unknownLobby()
  return lobby
}

/** lobbyOf, with the member list read once and with the lobby (an OAuth2 caller must be in it). */
export async function lobbyWithMembers(
  caller: Caller,
  lobbyId: string,
  { asMember = false } = {},
): Promise<{ lobby: LobbyRow; members: LobbyMemberRow[] }> {
  const c = appCaller(caller)
  const found = isSnowflake(lobbyId) ? await cachedLobbyWithMembers(lobbyId) : undefined
  const crossing = asMember && isFirstParty(c)
  if (!found || (found.lobby.applicationId !== c.applicationId && !crossing)) throw Errors.unknownLobby()
  if (c.kind === 'bearer' && !found.members.some((m) => m.userId === c.userId)) throw Errors.unknownLobby()
  return found
}

/** The server's own web client's token (oauth2/first-party.ts). */
export function isFirstParty(caller: Caller): boolean {
  return caller.kind === 'bearer' && caller.firstParty === true
}
