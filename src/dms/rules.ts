// Who may DM whom (issue 45, Discord's rules as the Social SDK's guide states them): friends, or users who share a
// guild or a lobby; never across a block, in either direction; a bot only users who share a guild with it, and never
// another bot. Every refusal is the same 403 50007, an unknown user's too, so the answer tells nothing of who exists.
import { cachedUser } from '../accounts/store'
import { cannotMessageUser, shareAGuild } from '../guilds/public'
import { cachedMember, lobbyIdsOfUser } from '../lobbies/members-store'
import { blockedEitherWay, relationshipBetween } from '../relationships/store'

const FRIEND = 1

/** Whether `a` may open a DM with `b` (both users exist and are not the same). */
export async function mayOpen(a: string, b: string): Promise<boolean> {
  if (a === b) return false
  const [me, them] = [await cachedUser(a), await cachedUser(b)]
  if (!me || !them) return false
  if (me.bot && them.bot) return false
  if (await blockedEitherWay(a, b)) return false
  if (await shareAGuild(a, b)) return true
  if (me.bot || them.bot) return false // a bot: a shared guild, nothing else
  if ((await relationshipBetween(a, b))?.type === FRIEND) return true
  return await shareALobby(a, b)
}

async function shareALobby(a: string, b: string): Promise<boolean> {
  for (const lobbyId of await lobbyIdsOfUser(a)) if (await cachedMember(lobbyId, b)) return true
  return false
}

/** POST /users/@me/channels' rule, as an error. */
export async function checkMayOpen(a: string, b: string): Promise<void> {
  if (!(await mayOpen(a, b))) throw cannotMessageUser()
}

/** A message in a DM that exists: refused once either side blocked the other. */
export async function maySend(senderId: string, recipientId: string): Promise<boolean> {
  return !(await blockedEitherWay(senderId, recipientId))
}
