// Opening a DM (POST /users/@me/channels) and listing them: the rules (rules.ts), then the guild model's channel
// (guilds/dm-channels.ts: one per pair). The caller's sessions get CHANNEL_CREATE each time it opens the DM, as
// Discord's; the other user's when the first message arrives (guilds/messages.ts).
import { announceDmChannel, dmChannelObject, dmChannelsOf, openDmChannel, type Recipients } from '../guilds/public'
import { checkMayOpen } from './rules'

export async function openDm(userId: string, recipientId: string) {
  await checkMayOpen(userId, recipientId)
  const { channel } = await openDmChannel(userId, recipientId)
  const recipients: Recipients = [userId, recipientId]
  await announceDmChannel(channel, recipients, userId)
  return await dmChannelObject(channel, recipients, userId)
}

export async function listDms(userId: string) {
  return await dmChannelsOf(userId)
}
