// Pinned messages: at most 50 per channel (30003), pinned and unpinned with MANAGE_MESSAGES (in a DM, by either
// recipient, as Discord's). A change is a MESSAGE_UPDATE of the message (`pinned`) and a CHANNEL_PINS_UPDATE with the
// channel's latest pin time.
import { clock } from '../core/clock'
import { Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { reading, transaction } from '../db/client'
import { messageAccess } from './access'
import { announce } from './dm-channels'
import { maxPins } from './errors'
import { messageEvent } from './message-changes'
import { MAX_PINS } from './limits'
import { has } from './permissions'
import { serializeMessages } from './serialize'
import { cachedChannel, lockChannel } from './store'
import { lastPinAt, messageInChannel, pinCount, pinnedMessages, updateMessageRow } from './messages-store'
import { reactionCounts } from './reactions-store'

/** The channel's pins, the latest first; none for a member who cannot read the channel's history, as Discord. */
export async function listPins(userId: string, channelId: string) {
  return (await pinsPage(userId, channelId, { limit: MAX_PINS })).items.map((pin) => pin.message)
}

/**
 * GET /channels/{id}/messages/pins: the pins made before `before` (ms), the latest first, `limit` of them, and whether
 * older ones remain (a channel holds at most MAX_PINS, so one read of them all).
 */
export async function pinsPage(userId: string, channelId: string, page: { before?: number; limit: number }) {
  return await reading(async () => {
    const { channel, permissions } = await messageAccess(channelId, userId)
    if (!has(permissions, Permission.READ_MESSAGE_HISTORY)) return { items: [], has_more: false }
    const older = (await pinnedMessages(channel.id)).filter(
      (m) => page.before === undefined || m.pinnedAt! < page.before,
    )
    const rows = older.slice(0, page.limit)
    const reactions = await reactionCounts(
      rows.map((m) => m.id),
      userId,
    )
    const messages = await serializeMessages(rows, channel.guildId, reactions)
    return {
      items: rows.map((m, i) => ({ pinned_at: new Date(m.pinnedAt!).toISOString(), message: messages[i]! })),
      has_more: older.length > rows.length,
    }
  })
}

/** Pin or unpin; a message already so is left as it is, without events. */
export async function setPinned(userId: string, channelId: string, messageId: string, pinned: boolean): Promise<void> {
  const dm = (await cachedChannel(channelId))?.guildId === null
  const access = await messageAccess(channelId, userId, dm ? 0n : Permission.MANAGE_MESSAGES)
  const { channel } = access
  await transaction(async (tx) => {
    await lockChannel(tx, channel.id) // the pin count is checked, then written
    const row = await messageInChannel(channel.id, messageId, tx)
    if (!row) throw Errors.unknownMessage()
    if ((row.pinnedAt !== null) === pinned) return
    if (pinned && (await pinCount(channel.id, tx)) >= MAX_PINS) throw maxPins()
    const updated = (await updateMessageRow(tx, channel.id, row.id, { pinnedAt: pinned ? clock.now() : null }))!
    const lastPin = await lastPinAt(channel.id, tx)
    announce(access, 'MESSAGE_UPDATE', await messageEvent(updated, channel.guildId))
    announce(access, 'CHANNEL_PINS_UPDATE', {
      ...(channel.guildId === null ? {} : { guild_id: channel.guildId }),
      channel_id: channel.id,
      last_pin_timestamp: lastPin === null ? null : new Date(lastPin).toISOString(),
    })
  })
}
