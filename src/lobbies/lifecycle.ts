// Creating, joining (by secret), changing and deleting lobbies.
import { lockUser } from '../accounts/store'
import { clock } from '../core/clock'
import { sha256Hex } from '../core/crypto'
import { snowflake } from '../core/snowflake'
import { queuedTransaction, transaction } from '../db/client'
import type { CamelKeys } from '../http/camel'
import type { AppCaller } from './access'
import { touchLobby } from './activity'
import { Effects } from './effects'
import { kickEventDeliveries } from './event-webhooks'
import { lobbyFull, userLobbyLimit } from './errors'
import { IDLE_TIMEOUT_DEFAULT, MAX_LOBBIES_PER_USER_PER_APP, MAX_MEMBERS_PER_LOBBY, SECRET_LIFETIME_MS } from './limits'
import { changeMembers, memberEffects } from './member-changes'
import {
  lockLobby,
  lockLobbySecret,
  deleteLobbyRow,
  getLobbyBySecret,
  insertLobby,
  updateLobby,
  updateLobbyMetadata,
} from './store'
import { countUserLobbies, insertMember, cachedLobbyMembers, memberOrder, updateMember } from './members-store'
import { retargetEventDeliveries } from './event-deliveries-store'
import type { LobbyMemberRow, LobbyRow, Metadata } from './tables'
import type { CreateLobbySchema, PatchLobbySchema, PutLobbySchema } from './schemas'
import { lobbySnapshot, lobbyView, restView } from './snapshots'

export { lobbyView, restView }

/** POST /lobbies's body (schemas.ts), its keys in camelCase; the override URL was checked and PINGed already. */
export type CreateInput = CamelKeys<typeof CreateLobbySchema.static>

/** What a new lobby is made of: the create body's fields, how it was made, and its secret (PUT). */
type NewLobby = Omit<CreateInput, 'members'> & Pick<LobbyRow, 'createdVia'> & { secretHash?: string }

async function newLobby(applicationId: string, input: NewLobby): Promise<LobbyRow> {
  const now = clock.now()
  const idle = input.idleTimeoutSeconds ?? IDLE_TIMEOUT_DEFAULT
  return await insertLobby({
    id: snowflake(),
    applicationId,
    metadata: input.metadata ?? null,
    flags: input.flags ?? 0,
    idleTimeoutSeconds: idle,
    secretHash: input.secretHash ?? null,
    secretExpiresAt: input.secretHash ? now + SECRET_LIFETIME_MS : null,
    createdVia: input.createdVia,
    // The countdown starts at creation; announceCreate stops it if a first member is online.
    idleDeadline: now + idle * 1000,
    createdAt: now,
    overrideEventWebhooksUrl: input.overrideEventWebhooksUrl ?? null,
  })
}

/** Subscribe the first members and announce the lobby to them and to the application's bots; returns the members. */
async function announceCreate(lobby: LobbyRow, effects: Effects): Promise<LobbyMemberRow[]> {
  await touchLobby(lobby)
  const members = await cachedLobbyMembers(lobby.id)
  for (const m of members) effects.subscribe(m.userId, lobby)
  effects.toLobby(lobby, 'LOBBY_CREATE', lobbySnapshot(lobby.id))
  return members
}

/** POST /lobbies (application): the lobby with its first members. */
export async function createLobby(caller: AppCaller, input: CreateInput) {
  // The answer shows the lobby as this transaction left it (no read after the commit).
  const { lobby, members } = await transaction(async (tx) => {
    const effects = new Effects()
    const created = await newLobby(caller.applicationId, { ...input, createdVia: 'post' })
    await changeMembers(tx, created, input.members ?? [], [])
    const members = await announceCreate(created, effects)
    await effects.flush()
    return { lobby: created, members }
  })
  return await restView(lobby, members, true)
}

/** PUT /lobbies's body (schemas.ts), its keys in camelCase. */
export type PutInput = CamelKeys<typeof PutLobbySchema.static>

/**
 * PUT /lobbies: join the lobby holding this secret, or create it. An OAuth2 caller joins as its user; a Bot
 * caller only creates or fetches. After the secret's 30 days nobody new joins with it: the secret moves to a
 * new lobby and the old one lives on without it (its members asking again still get it back until then).
 */
export async function createOrJoinLobby(caller: AppCaller, input: PutInput) {
  const userId = caller.kind === 'bearer' ? caller.userId : undefined
  const secretHash = sha256Hex(input.secret)
  // The lobby and its members are read once, in the transaction; the answer shows them as it left them. Committed
  // with the other writes of this event-loop turn (group commit: a client asking again writes nothing of its own
  // but its lobby's idle deadline, once per batch); the effects of a run that is rolled back are dropped with it.
  const { lobby, members } = await queuedTransaction(async (tx) => {
    const effects = new Effects()
    const now = clock.now()
    // Limits are counted, then written (PostgreSQL: the secret, the lobby, the user held in that order until COMMIT).
    await lockLobbySecret(tx, caller.applicationId, secretHash)
    let found = await getLobbyBySecret(caller.applicationId, secretHash)
    if (found) await lockLobby(tx, found.id)
    if (userId) await lockUser(tx, userId)
    let members = found ? await cachedLobbyMembers(found.id) : []
    const member = found && userId ? members.find((m) => m.userId === userId) : undefined
    if (found && !member && (found.secretExpiresAt ?? 0) <= now) {
      await updateLobby(tx, found.id, { secretHash: null, secretExpiresAt: null })
      found = undefined
    }
    if (!found) {
      if (userId && (await countUserLobbies(userId, caller.applicationId)) >= MAX_LOBBIES_PER_USER_PER_APP)
        throw userLobbyLimit('secret')
      const created = await newLobby(caller.applicationId, {
        ...input,
        metadata: input.lobbyMetadata,
        secretHash,
        createdVia: 'put',
      })
      if (userId)
        await insertMember({
          lobbyId: created.id,
          userId,
          applicationId: created.applicationId,
          metadata: input.memberMetadata ?? null,
          joinedAt: now,
        })
      const members = await announceCreate(created, effects)
      await effects.flush()
      return { lobby: created, members }
    }
    if (userId) members = await joinBySecret(found, userId, member, members, input.memberMetadata, effects)
    if (input.lobbyMetadata !== undefined) {
      found = await updateLobbyMetadata(found.id, input.lobbyMetadata)
      effects.toLobby(found, 'LOBBY_UPDATE', lobbySnapshot(found.id))
    }
    // A member joining or asking again, or new lobby metadata, is activity.
    if (userId || input.lobbyMetadata !== undefined) await touchLobby(found)
    await effects.flush()
    return { lobby: found, members }
  })
  return await restView(lobby, members, caller.kind === 'bot')
}

/** The user joins (or, already a member, may change its metadata); returns the member list after it. */
async function joinBySecret(
  lobby: LobbyRow,
  userId: string,
  member: LobbyMemberRow | undefined,
  members: LobbyMemberRow[],
  metadata: Metadata | null | undefined,
  effects: Effects,
): Promise<LobbyMemberRow[]> {
  if (member) {
    if (metadata === undefined) return members
    const updated = await updateMember(lobby.id, userId, { metadata })
    memberEffects(lobby, { added: [], updated: [updated], removed: [] }, effects)
    return members.map((m) => (m.userId === userId ? updated : m))
  }
  if (members.length >= MAX_MEMBERS_PER_LOBBY) throw lobbyFull('secret')
  if ((await countUserLobbies(userId, lobby.applicationId)) >= MAX_LOBBIES_PER_USER_PER_APP)
    throw userLobbyLimit('secret')
  const added = await insertMember({
    lobbyId: lobby.id,
    userId,
    applicationId: lobby.applicationId,
    metadata: metadata ?? null,
    joinedAt: clock.now(),
  })
  memberEffects(lobby, { added: [added], updated: [], removed: [] }, effects)
  return withMember(members, added)
}

/** The list with a new member, in cachedLobbyMembers' order. */
function withMember(members: LobbyMemberRow[], added: LobbyMemberRow): LobbyMemberRow[] {
  return [...members, added].sort(memberOrder)
}

/** PATCH /lobbies/{id}'s body (schemas.ts), its keys in camelCase; the override URL was checked and PINGed already. */
export type PatchInput = CamelKeys<typeof PatchLobbySchema.static>

/** PATCH /lobbies/{id}: `members`, when given, replaces the member list (members not listed are removed). */
export async function patchLobby(lobby: LobbyRow, input: PatchInput) {
  const { current: updated, retarget } = await transaction(async (tx) => {
    const effects = new Effects()
    const patch: Partial<LobbyRow> = {}
    if (input.metadata !== undefined) patch.metadata = input.metadata
    if (input.flags !== undefined) patch.flags = input.flags ?? 0
    if (input.idleTimeoutSeconds !== undefined)
      patch.idleTimeoutSeconds = input.idleTimeoutSeconds ?? IDLE_TIMEOUT_DEFAULT
    const retarget =
      input.overrideEventWebhooksUrl !== undefined && input.overrideEventWebhooksUrl !== lobby.overrideEventWebhooksUrl
    if (retarget) {
      patch.overrideEventWebhooksUrl = input.overrideEventWebhooksUrl
      // What the lobby has queued follows it to its new destination, due now (event-webhooks.ts).
      await retargetEventDeliveries(tx, lobby.id, clock.now())
    }
    const current = Object.keys(patch).length ? await updateLobby(tx, lobby.id, patch) : lobby
    if (input.members) {
      const listed = new Set(input.members.map((m) => m.id))
      const removes = (await cachedLobbyMembers(lobby.id)).map((m) => m.userId).filter((id) => !listed.has(id))
      memberEffects(current, await changeMembers(tx, current, input.members, removes), effects)
    }
    // A change of the lobby is activity: a running countdown starts over (with the new timeout, if one was given).
    await touchLobby(lobby)
    effects.toLobby(current, 'LOBBY_UPDATE', lobbySnapshot(current.id))
    await effects.flush()
    return { current, retarget }
  })
  if (retarget) kickEventDeliveries()
  return lobbyView(updated, true)
}

/** Delete a lobby and tell its members and bots; members leave its topic. Returns whether it existed. */
export async function deleteLobby(
  lobbyId: string,
  remove: () => Promise<LobbyRow | undefined> = async () => await deleteLobbyRow(lobbyId),
): Promise<boolean> {
  const gone = await transaction(async () => {
    const effects = new Effects()
    const members = await cachedLobbyMembers(lobbyId)
    const row = await remove()
    if (!row) return undefined
    effects.toLobby(row, 'LOBBY_DELETE', { id: row.id, reason: 'deleted' })
    for (const m of members) {
      effects.unsubscribe(m.userId, row.id)
      effects.left(row.id, m.userId, 'deleted')
    }
    await effects.flush()
    return row
  })
  return gone !== undefined
}
