// Creating, joining (by secret), changing and deleting lobbies.
import { clock } from '../core/clock'
import { sha256Hex } from '../core/crypto'
import { snowflake } from '../core/snowflake'
import { transaction, type DB } from '../db/client'
import type { AppCaller } from './access'
import { Effects } from './effects'
import { userLobbyLimit, lobbyFull } from './errors'
import { linkedChannelObject } from './linked'
import { IDLE_TIMEOUT_DEFAULT, MAX_LOBBIES_PER_USER_PER_APP, MAX_MEMBERS_PER_LOBBY, SECRET_LIFETIME_MS } from './limits'
import { changeMembers, memberEffects, type MemberInput } from './membership'
import { gatewayLobby, restLobby } from './serialize'
import {
  countMembers,
  countUserLobbies,
  deleteLobbyRow,
  getLobby,
  getLobbyBySecret,
  getMember,
  insertLobby,
  insertMember,
  listMembers,
  updateLobby,
  updateMember,
} from './store'
import type { LobbyMemberRow, LobbyRow, Metadata } from './tables'

export function lobbyView(lobby: LobbyRow, tx?: DB) {
  return restLobby(lobby, listMembers(lobby.id, tx), linkedChannelObject(lobby))
}

function gatewayView(lobby: LobbyRow, tx: DB) {
  return gatewayLobby(lobby, listMembers(lobby.id, tx), linkedChannelObject(lobby))
}

export type CreateInput = { metadata?: Metadata | null; members?: MemberInput[]; idleTimeoutSeconds?: number | null; flags?: number | null }

function newLobby(tx: DB, applicationId: string, input: { metadata?: Metadata | null; idleTimeoutSeconds?: number | null; flags?: number | null; secretHash?: string }): LobbyRow {
  const now = clock.now()
  const idle = input.idleTimeoutSeconds ?? IDLE_TIMEOUT_DEFAULT
  return insertLobby(tx, {
    id: snowflake(),
    applicationId,
    metadata: input.metadata ?? null,
    flags: input.flags ?? 0,
    idleTimeoutSeconds: idle,
    secretHash: input.secretHash ?? null,
    secretExpiresAt: input.secretHash ? now + SECRET_LIFETIME_MS : null,
    // Nobody is connected yet: the idle countdown starts at creation.
    idleDeadline: now + idle * 1000,
    createdAt: now,
  })
}

/** Subscribe the first members and announce the lobby to them and to the application's bots. */
function announceCreate(tx: DB, lobby: LobbyRow, effects: Effects): void {
  const members = listMembers(lobby.id, tx)
  for (const m of members) effects.subscribe(m.userId, lobby.id)
  effects.toLobby(lobby, 'LOBBY_CREATE', gatewayLobby(lobby, members, linkedChannelObject(lobby)))
}

/** POST /lobbies (application): the lobby with its first members. */
export function createLobby(caller: AppCaller, input: CreateInput) {
  const effects = new Effects()
  const view = transaction((tx) => {
    const lobby = newLobby(tx, caller.applicationId, input)
    changeMembers(tx, lobby, input.members ?? [], [])
    announceCreate(tx, lobby, effects)
    return lobbyView(lobby, tx)
  })
  effects.flush()
  return view
}

export type PutInput = {
  secret: string
  lobbyMetadata?: Metadata | null
  memberMetadata?: Metadata | null
  idleTimeoutSeconds?: number | null
  flags?: number | null
}

/**
 * PUT /lobbies: join the lobby holding this secret, or create it. An OAuth2 caller joins as its user; a Bot
 * caller only creates or fetches. After the secret's 30 days nobody new joins with it: the secret moves to a
 * new lobby and the old one lives on without it.
 */
export function createOrJoinLobby(caller: AppCaller, input: PutInput) {
  const effects = new Effects()
  const userId = caller.kind === 'bearer' ? caller.userId : undefined
  const secretHash = sha256Hex(input.secret)
  const view = transaction((tx) => {
    const now = clock.now()
    let lobby = getLobbyBySecret(tx, caller.applicationId, secretHash)
    const member = lobby && userId ? getMember(lobby.id, userId, tx) : undefined
    if (lobby && !member && (lobby.secretExpiresAt ?? 0) <= now) {
      updateLobby(tx, lobby.id, { secretHash: null, secretExpiresAt: null })
      lobby = undefined
    }
    if (!lobby) {
      if (userId && countUserLobbies(tx, userId, caller.applicationId) >= MAX_LOBBIES_PER_USER_PER_APP) throw userLobbyLimit('secret')
      const created = newLobby(tx, caller.applicationId, { ...input, metadata: input.lobbyMetadata, secretHash })
      if (userId) insertMember(tx, { lobbyId: created.id, userId, applicationId: created.applicationId, metadata: input.memberMetadata ?? null, joinedAt: now })
      announceCreate(tx, created, effects)
      return lobbyView(created, tx)
    }
    if (input.lobbyMetadata !== undefined) {
      lobby = updateLobby(tx, lobby.id, { metadata: input.lobbyMetadata })
      effects.toLobby(lobby, 'LOBBY_UPDATE', gatewayView(lobby, tx))
    }
    if (userId) joinBySecret(tx, lobby, userId, member, input.memberMetadata, effects)
    return lobbyView(lobby, tx)
  })
  effects.flush()
  return view
}

function joinBySecret(tx: DB, lobby: LobbyRow, userId: string, member: LobbyMemberRow | undefined, metadata: Metadata | null | undefined, effects: Effects): void {
  if (member) {
    if (metadata === undefined) return
    const updated = updateMember(tx, lobby.id, userId, { metadata })
    memberEffects(tx, lobby, { added: [], updated: [updated], removed: [] }, effects)
    return
  }
  if (countMembers(tx, lobby.id) >= MAX_MEMBERS_PER_LOBBY) throw lobbyFull('secret')
  if (countUserLobbies(tx, userId, lobby.applicationId) >= MAX_LOBBIES_PER_USER_PER_APP) throw userLobbyLimit('secret')
  const added = insertMember(tx, { lobbyId: lobby.id, userId, applicationId: lobby.applicationId, metadata: metadata ?? null, joinedAt: clock.now() })
  memberEffects(tx, lobby, { added: [added], updated: [], removed: [] }, effects)
}

export type PatchInput = {
  metadata?: Metadata | null
  members?: MemberInput[]
  idleTimeoutSeconds?: number | null
  flags?: number | null
}

/** PATCH /lobbies/{id}: `members`, when given, replaces the member list (members not listed are removed). */
export function patchLobby(lobby: LobbyRow, input: PatchInput) {
  const effects = new Effects()
  const view = transaction((tx) => {
    const patch: Partial<LobbyRow> = {}
    if (input.metadata !== undefined) patch.metadata = input.metadata
    if (input.flags !== undefined) patch.flags = input.flags ?? 0
    if (input.idleTimeoutSeconds !== undefined) {
      const seconds = input.idleTimeoutSeconds ?? IDLE_TIMEOUT_DEFAULT
      patch.idleTimeoutSeconds = seconds
      // A running countdown restarts with the new timeout.
      if (lobby.idleDeadline !== null) patch.idleDeadline = clock.now() + seconds * 1000
    }
    let current = Object.keys(patch).length ? updateLobby(tx, lobby.id, patch) : lobby
    if (input.members) {
      const listed = new Set(input.members.map((m) => m.id))
      const removes = listMembers(lobby.id, tx).map((m) => m.userId).filter((id) => !listed.has(id))
      const changes = changeMembers(tx, current, input.members, removes)
      current = getLobby(lobby.id, tx) ?? current
      memberEffects(tx, current, changes, effects)
    }
    effects.toLobby(current, 'LOBBY_UPDATE', gatewayView(current, tx))
    return lobbyView(current, tx)
  })
  effects.flush()
  return view
}

/** Delete a lobby and tell its members and bots; members leave its topic. Returns whether it existed. */
export function deleteLobby(lobbyId: string, remove: (tx: DB) => LobbyRow | undefined = (tx) => deleteLobbyRow(tx, lobbyId)): boolean {
  const effects = new Effects()
  const gone = transaction((tx) => {
    const members = listMembers(lobbyId, tx)
    const row = remove(tx)
    if (!row) return undefined
    effects.toLobby(row, 'LOBBY_DELETE', { id: row.id, reason: 'deleted' })
    for (const m of members) effects.unsubscribe(m.userId, row.id)
    return row
  })
  effects.flush()
  return gone !== undefined
}
