// A user's changed profile as others learn it, as Discord tells them: USER_UPDATE is the user's own; everyone who
// sees the user (friends here, lobby-mates through lobbies/) gets PRESENCE_UPDATE whose `user` is the whole public user
// (Discord's presence `user` may carry any of the user's fields), with the presence as a friend sees it.
import { publicUser } from '../accounts/serialize'
import { cachedUser } from '../accounts/store'
import { audiences, events } from '../gateway/bus'
import { RelationshipType } from './limits'
import { presenceFor } from './presence'
import { presenceOf } from './presence-store'
import { relationshipsOf } from './store'

/** PRESENCE_UPDATE's data after a profile change: the presence as friends see it, with the new public user. */
export async function profilePresence(userId: string) {
  const user = await cachedUser(userId)
  const presence = presenceFor(userId, await presenceOf(userId))
  return { ...presence, user: user ? publicUser(user) : presence.user }
}

/** The user's friends' sessions hear of its new profile (installed as an accounts profile hook). */
export async function tellFriendsProfile(userId: string): Promise<void> {
  const friends = (await relationshipsOf(userId)).filter((r) => r.type === RelationshipType.FRIEND)
  if (!friends.length) return
  const data = await profilePresence(userId)
  for (const r of friends) events.publishToUser(r.otherId, audiences.relationships, 'PRESENCE_UPDATE', data)
}
