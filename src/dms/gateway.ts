// READY's `private_channels`: a user session's DM channels (a bot's READY has none, as Discord's).
import type { Caller } from '../core/caller'
import { audiences, sees } from '../gateway/bus'
import { dmChannelsOf } from '../guilds/public'

export async function dmIdentify(caller: Caller) {
  if (caller.kind !== 'user' || !sees(caller, audiences.directMessages)) return { ready: { private_channels: [] } }
  return { ready: { private_channels: await dmChannelsOf(caller.userId) } }
}
