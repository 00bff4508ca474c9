// Adding, updating and removing lobby members inside a transaction, with the limits and the gateway effects
// (members follow their lobbies' topics live).
import { existingUserIds, lockUser } from '../accounts/store'
import { clock } from '../core/clock'
import { Errors } from '../core/errors'
import type { DB } from '../db/client'
import type { Effects } from './effects'
import { lobbyFull, userLobbyLimit } from './errors'
import { MAX_LOBBIES_PER_USER_PER_APP, MAX_MEMBERS_PER_LOBBY } from './limits'
import { eventMember } from './serialize'
import { lobbySnapshot } from './snapshots'
import { touchLobby } from './activity'
import { lockLobby } from './store'
import {
  cachedLobbyMembers,
  countMembers,
  countUserLobbies,
  deleteMember,
  insertMember,
  updateMember,
} from './members-store'
import type { MemberSchema } from './schemas'
import type { LobbyMemberRow, LobbyRow, Metadata } from './tables'

/** A member as a route body gives it (schemas.ts). */
export type MemberInput = typeof MemberSchema.static

export type MemberChanges = { added: LobbyMemberRow[]; updated: LobbyMemberRow[]; removed: LobbyMemberRow[] }

type Options = {
  /** Field named by limit errors. */
  field?: string
  /** Bulk: users already at their lobby limit are left out instead of failing the request (Discord's bulk rule). */
  dropOverUserLimit?: boolean
  /** Report listed existing members as updated even when nothing changed (PUT member, bulk). */
  reportUnchanged?: boolean
}

const sameMetadata = (a: Metadata | null, b: Metadata | null) => JSON.stringify(a) === JSON.stringify(b)

/** Upsert `upserts` and remove `removes`. Omitted or null fields mean the defaults (no metadata, no flags). */
export async function changeMembers(
  tx: DB,
  lobby: LobbyRow,
  upserts: MemberInput[],
  removes: string[],
  options: Options = {},
): Promise<MemberChanges> {
  const field = options.field ?? 'members'
  const wanted = new Map<string, MemberInput>()
  for (const m of upserts) wanted.set(m.id, m)
  const known = await existingUserIds([...wanted.keys()])
  for (const id of wanted.keys()) if (!known.has(id)) throw Errors.unknownUser()

  // The lobby's member count and each added user's lobby count are checked, then written: held until COMMIT (the
  // lobby first, then the users in id order; PostgreSQL, db/client.ts lockForUpdate).
  await lockLobby(tx, lobby.id)
  const current = new Map((await cachedLobbyMembers(lobby.id)).map((m) => [m.userId, m]))
  for (const id of [...wanted.keys()].filter((id) => !current.has(id)).sort()) await lockUser(tx, id)
  const changes: MemberChanges = { added: [], updated: [], removed: [] }

  for (const id of new Set(removes)) {
    if (wanted.has(id)) continue
    const gone = current.has(id) ? await deleteMember(lobby.id, id) : undefined
    if (gone) changes.removed.push(gone)
  }

  const now = clock.now()
  for (const input of wanted.values()) {
    const metadata = input.metadata ?? null
    const flags = input.flags ?? 0
    const existing = current.get(input.id)
    if (existing) {
      if (!options.reportUnchanged && sameMetadata(existing.metadata, metadata) && existing.flags === flags) continue
      changes.updated.push(await updateMember(lobby.id, input.id, { metadata, flags }))
      continue
    }
    if ((await countUserLobbies(input.id, lobby.applicationId)) >= MAX_LOBBIES_PER_USER_PER_APP) {
      if (options.dropOverUserLimit) continue
      throw userLobbyLimit(field)
    }
    changes.added.push(
      await insertMember({
        lobbyId: lobby.id,
        userId: input.id,
        applicationId: lobby.applicationId,
        metadata,
        flags,
        joinedAt: now,
      }),
    )
  }

  if (changes.added.length > 0 && (await countMembers(lobby.id)) > MAX_MEMBERS_PER_LOBBY) throw lobbyFull(field)
  // A member change is activity: the idle countdown starts over (or stays off while someone keeps the lobby active).
  if (changes.added.length + changes.updated.length + changes.removed.length > 0) await touchLobby(lobby)
  return changes
}

/** The gateway side of member changes: events to the lobby, subscriptions, and the lobby itself to joiners/leavers. */
export function memberEffects(lobby: LobbyRow, changes: MemberChanges, effects: Effects): void {
  const base = { lobby_id: lobby.id, application_id: lobby.applicationId }
  for (const m of changes.removed) {
    effects.toLobby(lobby, 'LOBBY_MEMBER_REMOVE', { member: eventMember(m), ...base })
    effects.unsubscribe(m.userId, lobby.id)
    effects.toUser(m.userId, lobby, 'LOBBY_DELETE', { id: lobby.id, reason: 'removed' })
    effects.left(lobby.id, m.userId, 'removed')
  }
  for (const m of changes.updated) effects.toLobby(lobby, 'LOBBY_MEMBER_UPDATE', { member: eventMember(m), ...base })
  if (changes.added.length === 0) return
  const snapshot = lobbySnapshot(lobby.id)
  for (const m of changes.added) {
    effects.subscribe(m.userId, lobby)
    effects.toLobby(lobby, 'LOBBY_MEMBER_ADD', { member: eventMember(m), ...base })
    effects.toUser(m.userId, lobby, 'LOBBY_CREATE', snapshot)
    effects.joined(lobby, m.userId)
  }
}
