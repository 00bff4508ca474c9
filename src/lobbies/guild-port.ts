// What lobbies need from the guilds domain (channel linking, invites, mirrored messages). Kept to one small seam
// so guilds never imports lobbies and lobbies touch no guild table.
import { appState } from '../core/app'

export type LinkableChannel = { id: string; type: number; guildId: string | null; nsfw?: boolean }

export type GuildPort = {
  getChannel(id: string): Promise<LinkableChannel | undefined>
  /** The Discord channel object of a channel. */
  serializeChannel(id: string): unknown
  /** The user's effective permission bits on the channel (0n when not in its guild). */
  channelPermissions(userId: string, channelId: string): Promise<bigint>
  /** A single-use invite to the channel that only `targetUserId` can accept, expiring after `maxAgeSeconds`. */
  createTargetedInvite(input: {
    channelId: string
    inviterId: string
    targetUserId: string
    maxAgeSeconds: number
  }): Promise<{ code: string; invite: unknown }>
  /** Post a message in the channel as the author (emits MESSAGE_CREATE to the channel's audience). */
  createChannelMessage(input: {
    channelId: string
    authorId: string
    content: string
  }): Promise<{ id: string } | undefined>
  /**
   * The lobby original of this channel message got moderation metadata: MESSAGE_UPDATE to the channel's audience
   * (called inside the moderation's transaction: the event is given in it).
   */
  channelMessageModerated(messageId: string, moderationMetadata: Record<string, string>): void | Promise<void>
}

/** What this module holds per App (core/app.ts). */
const newGuildPort = () => ({
  port: undefined as GuildPort | undefined,
})
declare module '../core/app' {
  interface AppState {
    guildPort: ReturnType<typeof newGuildPort>
  }
}
const held = appState('guildPort', newGuildPort)

export function setGuildPort(next: GuildPort | undefined): void {
  held().port = next
}

export function guildPort(): GuildPort | undefined {
  return held().port
}
