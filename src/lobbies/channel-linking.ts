// Linking a guild text channel to a lobby (PATCH .../channel-linking) and targeted invites to it.
import { clock } from '../core/clock'
import { ChannelType, Permission } from '../core/discord'
import { Errors, formError } from '../core/errors'
import { transaction } from '../db/client'
import type { AppCaller } from './access'
import { Effects, lazy } from './effects'
import { guildPort } from './guild-port'
import { LobbyMemberFlags } from './limits'
import { getLobbyByChannel, updateLobby } from './store'
import { getMember } from './members-store'
import type { LobbyRow } from './tables'
import { lobbySnapshot, lobbyView } from './snapshots'

export const INVITE_MAX_AGE_SECONDS = 3600

const NEEDED = Permission.MANAGE_CHANNELS | Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES

/** The channel object with its lobby link, as CHANNEL_UPDATE carries it. */
async function channelWithLink(channelId: string, lobby: LobbyRow | undefined) {
  const channel = await guildPort()?.serializeChannel(channelId)
  if (!channel || typeof channel !== 'object') return channel
  if (!lobby || lobby.linkedChannelId !== channelId) return { ...channel, linked_lobby: null }
  return {
    ...channel,
    linked_lobby: {
      application_id: lobby.applicationId,
      lobby_id: lobby.id,
      linked_by: lobby.linkedBy,
      linked_at: lobby.linkedAt === null ? null : new Date(lobby.linkedAt).toISOString(),
    },
  }
}

/** The application that created the lobby may (re)link; an OAuth2 member needs CAN_LINK_LOBBY. */
async function mayLink(caller: AppCaller, lobby: LobbyRow): Promise<void> {
  if (caller.kind === 'bot') return
  const member = await getMember(lobby.id, caller.userId)
  if (!member) throw Errors.unknownLobby()
  if ((member.flags & LobbyMemberFlags.CAN_LINK_LOBBY) === 0) throw Errors.missingPermissions()
}

export async function setLinkedChannel(caller: AppCaller, lobby: LobbyRow, channelId: string | null | undefined) {
  await mayLink(caller, lobby)
  const forApp = caller.kind === 'bot'
  if (channelId === null || channelId === undefined) return unlink(lobby, forApp)
  const port = guildPort()
  const channel = port ? await port.getChannel(channelId) : undefined
  if (!port || !channel) throw Errors.unknownChannel()
  if (channel.type !== ChannelType.GUILD_TEXT || !channel.guildId)
    throw formError({ channel_id: ['CHANNEL_TYPE_INVALID', 'Only guild text channels can be linked.'] })
  if (channel.nsfw)
    throw formError({ channel_id: ['CHANNEL_AGE_RESTRICTED', 'Age-restricted channels cannot be linked.'] })
  const permissions = await port.channelPermissions(caller.userId, channel.id)
  if ((permissions & Permission.VIEW_CHANNEL) === 0n) throw Errors.missingAccess()
  if ((permissions & NEEDED) !== NEEDED) throw Errors.missingPermissions()

  const updated = await transaction(async (tx) => {
    const effects = new Effects()
    const holder = await getLobbyByChannel(channel.id, tx)
    if (holder && holder.id !== lobby.id) throw alreadyLinked()
    if (holder) return holder
    const previous = lobby.linkedChannelId
    const row = await updateLobby(tx, lobby.id, {
      linkedChannelId: channel.id,
      linkedBy: caller.userId,
      linkedAt: clock.now(),
    })
    effects.toLobby(row, 'LOBBY_UPDATE', lobbySnapshot(row.id))
    if (previous)
      effects.toLobby(
        row,
        'CHANNEL_UPDATE',
        lazy(() => channelWithLink(previous, undefined)),
      )
    effects.toLobby(
      row,
      'CHANNEL_UPDATE',
      lazy(() => channelWithLink(channel.id, row)),
    )
    await effects.flush()
    return row
  })
  return lobbyView(updated, forApp)
}

const alreadyLinked = () =>
  formError({ channel_id: ['CHANNEL_ALREADY_LINKED', 'This channel is already linked to a lobby.'] })

async function unlink(lobby: LobbyRow, forApp: boolean) {
  const previous = lobby.linkedChannelId
  if (!previous) return lobbyView(lobby, forApp)
  const row = await transaction(async (tx) => {
    const effects = new Effects()
    const updated = await updateLobby(tx, lobby.id, { linkedChannelId: null, linkedBy: null, linkedAt: null })
    effects.toLobby(updated, 'LOBBY_UPDATE', lobbySnapshot(updated.id))
    effects.toLobby(
      updated,
      'CHANNEL_UPDATE',
      lazy(() => channelWithLink(previous, undefined)),
    )
    await effects.flush()
    return updated
  })
  return lobbyView(row, forApp)
}

/** POST .../members/{@me|user}/invites: a single-use, one-hour invite to the linked channel only `targetId` may accept. */
export async function inviteToLinkedChannel(
  caller: AppCaller,
  lobby: LobbyRow,
  targetId: string,
): Promise<{ code: string }> {
  if (!(await getMember(lobby.id, targetId))) throw Errors.unknownUser()
  const port = guildPort()
  if (!lobby.linkedChannelId || !port) throw Errors.unknownChannel()
  const { code, invite } = await port.createTargetedInvite({
    channelId: lobby.linkedChannelId,
    inviterId: caller.userId,
    targetUserId: targetId,
    maxAgeSeconds: INVITE_MAX_AGE_SECONDS,
  })
  const effects = new Effects()
  effects.toLobby(lobby, 'INVITE_CREATE', invite)
  await effects.flush()
  return { code }
}
