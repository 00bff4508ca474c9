// What other domains use from guilds. Lobbies reach channels through this object (wired in app.ts), so guilds
// never imports lobbies; registration joins by invite; experiments read a guild's filterable attributes; OAuth2's bot
// scope adds a bot (guildsForInstalls, through oauth2/install-port.ts).
import { clock } from '../core/clock'
import { transaction } from '../db/client'
import { channelPermissionsOf } from './channels'
import { announceModeration, writeMessage } from './messages'
import { serializeChannelRow, serializeInvite } from './serialize'
import { cachedChannel, cachedGuild, cachedGuildMember, memberCount } from './store'
import type { GuildChannelRow } from './tables'
import { insertInvite } from './invites-store'
import { randomBytes } from 'node:crypto'
import { guildsToInstallIn, installBot, installedGuild } from './bot-install'

export { joinGuildByInvite } from './invites'
export {
  announceDmChannel,
  dmChannelsOf,
  dmChannelObject,
  type DmRules,
  installDmRules,
  openDmChannel,
  type Recipients,
} from './dm-channels'
export { cannotMessageUser } from './errors'
export { shareAGuild } from './store'
export { removeFromEveryGuild, setGuildAttributes } from './lifecycle'

/** A guild's channel (lobbies link those only: a DM is no channel to them). */
async function guildChannel(id: string): Promise<GuildChannelRow | undefined> {
  const c = await cachedChannel(id)
  return c && c.guildId !== null ? (c as GuildChannelRow) : undefined
}

export const guildsForLobbies = {
  async getChannel(id: string) {
    const c = await guildChannel(id)
    return c ? { id: c.id, type: c.type, guildId: c.guildId, nsfw: c.nsfw } : undefined
  },
  async serializeChannel(id: string) {
    const c = await guildChannel(id)
    return c ? serializeChannelRow(c) : undefined
  },
  async channelPermissions(userId: string, channelId: string) {
    const c = await guildChannel(channelId)
    return c ? await channelPermissionsOf(userId, c) : 0n
  },
  /** Single-use invite only `targetUserId` can accept; the lobby domain checked the inviter's right to link. */
  async createTargetedInvite(input: {
    channelId: string
    inviterId: string
    targetUserId: string
    maxAgeSeconds: number
  }) {
    const channel = (await guildChannel(input.channelId))!
    const guild = (await cachedGuild(channel.guildId))!
    const now = clock.now()
    const row = await transaction(
      async (tx) =>
        await insertInvite(tx, {
          code: randomBytes(8).toString('base64url'),
          guildId: guild.id,
          channelId: channel.id,
          inviterId: input.inviterId,
          targetUserId: input.targetUserId,
          maxAge: input.maxAgeSeconds,
          maxUses: 1,
          createdAt: now,
          expiresAt: now + input.maxAgeSeconds * 1000,
        }),
    )
    return { code: row.code, invite: await serializeInvite(row, guild, channel) }
  },
  async createChannelMessage(input: { channelId: string; authorId: string; content: string }) {
    const channel = await guildChannel(input.channelId)
    return channel ? await writeMessage(channel, input.authorId, input.content) : undefined
  },
  async channelMessageModerated(messageId: string, moderationMetadata: Record<string, string>) {
    await announceModeration(messageId, moderationMetadata)
  },
}

/** The attributes server experiments filter on. */
export async function guildForExperiments(guildId: string) {
  const g = await cachedGuild(guildId)
  if (!g) return undefined
  return {
    id: g.id,
    features: g.features,
    member_count: await memberCount(g.id),
    vanity_url_code: g.vanityUrlCode,
    hub_type: g.hubType,
    created_at: g.createdAt,
  }
}

/** Whether the user is a member of the guild (application commands of a guild need its bot there). */
export async function isGuildMember(guildId: string, userId: string): Promise<boolean> {
  return (await cachedGuildMember(guildId, userId)) !== undefined
}

/** What OAuth2's bot scope needs (oauth2/install-port.ts), filled in by installs/module.ts. */
export const guildsForInstalls = {
  guildsFor: guildsToInstallIn,
  addBot: installBot,
  guild: installedGuild,
}
