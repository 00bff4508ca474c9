// Guild channels: text (0) and voice (2); created, read, edited, moved, deleted.
import { clock } from '../core/clock'
import { ChannelType, Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { snowflake } from '../core/snowflake'
import { transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import { channelAccess, guildAccess, permissionsOf } from './access'
import { dmAccess, dmChannelObject } from './dm-channels'
import { dropChannelTopic, syncAllMembers } from './gateway'
import { has } from './permissions'
import {
  deleteChannelRow,
  cachedChannel,
  cachedGuild,
  cachedGuildMember,
  guildChannels,
  insertChannel,
  memberUserIds,
  updateChannelRow,
} from './store'
import type { ChannelPositionsInput, CreateChannelInput, PatchChannelInput } from './schemas'
import { serializeChannelRow } from './serialize'
import type { ChannelRow } from './tables'

export async function createChannel(userId: string, guildId: string, input: CreateChannelInput) {
  await guildAccess(guildId, userId, Permission.MANAGE_CHANNELS)
  return await transaction(async (tx) => {
    const row = await insertChannel(tx, {
      id: snowflake(),
      guildId,
      type: input.type ?? ChannelType.GUILD_TEXT,
      name: input.name,
      topic: input.topic ?? null,
      position: input.position ?? (await guildChannels(guildId)).length,
      nsfw: input.nsfw ?? false,
      createdAt: clock.now(),
    })
    // Members who can view it follow the channel before its creation is announced there.
    await syncAllMembers(guildId)
    const body = serializeChannelRow(row)
    events.publish(topics.channel(row.id), 'CHANNEL_CREATE', body)
    return body
  })
}

export async function listChannels(userId: string, guildId: string) {
  const { permissions } = await guildAccess(guildId, userId)
  return has(permissions, Permission.VIEW_CHANNEL) ? (await guildChannels(guildId)).map(serializeChannelRow) : []
}

export async function getChannel(userId: string, channelId: string) {
  const channel = await cachedChannel(channelId)
  if (channel?.guildId === null) {
    const { recipients } = await dmAccess(channel, userId, 0n)
    return await dmChannelObject(channel, recipients!, userId)
  }
  return serializeChannelRow((await channelAccess(channelId, userId)).channel)
}

export async function updateChannel(userId: string, channelId: string, input: PatchChannelInput) {
  const { channel } = await channelAccess(channelId, userId, Permission.MANAGE_CHANNELS)
  const changes = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.topic !== undefined ? { topic: input.topic } : {}),
    ...(input.position !== undefined ? { position: input.position } : {}),
    ...(input.nsfw !== undefined ? { nsfw: input.nsfw } : {}),
  }
  // An empty edit changes nothing and announces nothing (Discord answers the channel as it is).
  if (Object.keys(changes).length === 0) return serializeChannelRow(channel)
  return await transaction(async (tx) => {
    const body = serializeChannelRow(await updateChannelRow(tx, channelId, changes))
    events.publish(topics.channel(channelId), 'CHANNEL_UPDATE', body)
    return body
  })
}

/** Modify Guild Channel Positions (MANAGE_CHANNELS): each channel named to its position, CHANNEL_UPDATE for each moved. */
export async function moveChannels(userId: string, guildId: string, moves: ChannelPositionsInput): Promise<void> {
  await guildAccess(guildId, userId, Permission.MANAGE_CHANNELS)
  const channels = new Map((await guildChannels(guildId)).map((c) => [c.id, c]))
  if (moves.some((m) => !channels.has(m.id))) throw Errors.unknownChannel()
  const changed = moves.filter(
    (m): m is typeof m & { position: number } =>
      m.position !== undefined && m.position !== null && m.position !== channels.get(m.id)!.position,
  )
  await transaction(async (tx) => {
    for (const m of changed) {
      const row = await updateChannelRow(tx, m.id, { position: m.position })
      events.publish(topics.channel(row.id), 'CHANNEL_UPDATE', serializeChannelRow(row))
    }
  })
}

export async function deleteChannel(userId: string, channelId: string) {
  const { channel } = await channelAccess(channelId, userId, Permission.MANAGE_CHANNELS)
  const body = serializeChannelRow(channel)
  await transaction(async (tx) => {
    await deleteChannelRow(tx, channelId)
    events.publish(topics.channel(channelId), 'CHANNEL_DELETE', body)
    dropChannelTopic(await memberUserIds(channel.guildId), channelId)
  })
  return body
}

/** Effective permissions of a user on a channel; 0 when the user is not in its guild. */
export async function channelPermissionsOf(userId: string, channel: ChannelRow): Promise<bigint> {
  const guild = channel.guildId === null ? undefined : await cachedGuild(channel.guildId)
  if (!guild || !(await cachedGuildMember(guild.id, userId))) return 0n
  return await permissionsOf(guild, userId)
}
