// WebAuthn through @simplewebauthn/server: registration and assertions always against the challenge this server issued
// with a ticket (never one the client names), the configured origins and RP ID, and the stored signature counter.
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { config } from '../../../config'
import { clock } from '../../../core/clock'
import { snowflake } from '../../../core/snowflake'
import type { UserRow } from '../../../accounts/tables'
import { transaction } from '../../../db/client'
import type { FactorRoutesContext } from '../../factor'
import { redeemTicket } from '../../tickets'
import { type BackupCodeView, type NewBackupCodes, storeBackupCodes } from '../backup/backup-codes'
import {
  advanceCounter,
  credentialsOfUser,
  deleteCredential,
  deleteCredentialsOf,
  findCredentialByCredentialId,
  hasCredential,
  insertCredential,
  renameCredentialRow,
  type CredentialRow,
  type TicketRow,
} from '../../store'

/**
 * @simplewebauthn/server and its x509/asn1 chain (~15 ms of module loading in the binary), loaded on the first
 * WebAuthn call rather than at start. Its x509 dependency (tsyringe) needs Reflect metadata loaded before it.
 */
let library: Promise<typeof import('@simplewebauthn/server')> | undefined
function webauthnLibrary() {
  library ??= import('reflect-metadata').then(() => import('@simplewebauthn/server'))
  return library
}

const rpId = () => config().webauthnRpId ?? new URL(config().webUrl).hostname
const origins = () => config().webauthnOrigins ?? [new URL(config().webUrl).origin]

export type { CredentialRow }
const WEBAUTHN_TIMEOUT_MS = 120_000

/** Discord's authenticator object (type 1 = WebAuthn). */
export const authenticatorView = (c: CredentialRow) => ({ id: c.id, name: c.name, type: 1 })

export async function credentialsOf(userId: string): Promise<CredentialRow[]> {
  return await credentialsOfUser(userId)
}

export async function hasWebauthn(userId: string): Promise<boolean> {
  return await hasCredential(userId)
}

/** Registration options for a user (its existing credentials excluded); the challenge goes on the ticket. */
export async function registrationOptions(user: UserRow) {
  const { generateRegistrationOptions } = await webauthnLibrary()
  const options = await generateRegistrationOptions({
    rpName: 'Lobby Server',
    rpID: rpId(),
    userName: user.username,
    userDisplayName: user.globalName ?? user.username,
    userID: new TextEncoder().encode(user.id),
    attestationType: 'none',
    timeout: WEBAUTHN_TIMEOUT_MS,
    excludeCredentials: (await credentialsOf(user.id)).map((c) => ({ id: c.credentialId, transports: c.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  })
  return { challenge: options.challenge, json: JSON.stringify({ publicKey: options }) }
}

/** Assertion options: for a user's credentials, or (passwordless) for any discoverable credential. */
export async function authenticationOptions(
  userId: string | null,
  userVerification: 'preferred' | 'required' = 'preferred',
) {
  const { generateAuthenticationOptions } = await webauthnLibrary()
  const options = await generateAuthenticationOptions({
    rpID: rpId(),
    timeout: WEBAUTHN_TIMEOUT_MS,
    userVerification,
    allowCredentials: userId
      ? (await credentialsOf(userId)).map((c) => ({ id: c.credentialId, transports: c.transports as never }))
      : [],
  })
  return { challenge: options.challenge, json: JSON.stringify({ publicKey: options }) }
}

function parseJson<T>(value: unknown): T | undefined {
  if (typeof value !== 'string' || value.length > 64 * 1024)
    return typeof value === 'object' && value ? (value as T) : undefined
  try {
    const parsed = JSON.parse(value)
    return parsed && typeof parsed === 'object' ? parsed : undefined
  } catch {
    return undefined
  }
}

/** A verified registration's credential, to store with addCredential. */
export type NewCredential = Parameters<typeof insertCredential>[0]

/** Verify a registration response against the issued challenge: the credential to store, or undefined. */
export async function verifyRegistration(
  userId: string,
  challenge: string,
  name: string,
  credential: unknown,
): Promise<NewCredential | undefined> {
  const response = parseJson<RegistrationResponseJSON>(credential)
  if (!response) return undefined
  const { verifyRegistrationResponse } = await webauthnLibrary()
  try {
    const result = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origins(),
      expectedRPID: rpId(),
      requireUserVerification: false,
    })
    if (!result.verified) return undefined
    const { credential: c } = result.registrationInfo
    return {
      id: snowflake(),
      userId,
      credentialId: c.id,
      publicKey: Buffer.from(c.publicKey).toString('base64url'),
      counter: c.counter,
      transports: (c.transports ?? []) as string[],
      name,
      createdAt: clock.now(),
    }
  } catch {
    return undefined
  }
}

/**
 * Store a verified credential and spend its ticket; a first strong factor (`backup`: its codes, hashed already) turns
 * MFA on: its backup codes and the account's USER_UPDATE commit with it. Undefined: the key is registered already.
 */
export async function addCredential(
  mfa: FactorRoutesContext,
  row: NewCredential,
  ticket: TicketRow,
  backup: NewBackupCodes | undefined,
): Promise<{ created: CredentialRow; backup_codes?: BackupCodeView[] } | undefined> {
  return await transaction(async () => {
    const created = await insertCredential(row)
    if (!created) return undefined
    await redeemTicket(ticket)
    if (!backup) return { created }
    const backup_codes = await storeBackupCodes(row.userId, backup)
    await mfa.userChanged(row.userId)
    return { created, backup_codes }
  })
}

/**
 * Verify an assertion against the issued challenge. `userId` restricts it to that user's credentials (second factor);
 * null lets any registered credential answer (passwordless), then user verification is required.
 * Returns the credential used, with its counter advanced atomically, or undefined.
 */
export async function verifyAssertion(
  credential: unknown,
  challenge: string,
  userId: string | null,
): Promise<CredentialRow | undefined> {
  const response = parseJson<AuthenticationResponseJSON>(credential)
  if (!response || typeof response.id !== 'string') return undefined
  const row = await findCredentialByCredentialId(response.id)
  if (!row || (userId !== null && row.userId !== userId)) return undefined
  // Passwordless: the authenticator must name the same user it was registered for.
  if (
    userId === null &&
    response.response?.userHandle &&
    Buffer.from(response.response.userHandle, 'base64url').toString() !== row.userId
  )
    return undefined
  const { verifyAuthenticationResponse } = await webauthnLibrary()
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origins(),
      expectedRPID: rpId(),
      credential: {
        id: row.credentialId,
        publicKey: Buffer.from(row.publicKey, 'base64url'),
        counter: row.counter,
        transports: row.transports as never,
      },
      requireUserVerification: userId === null,
    })
    if (!result.verified) return undefined
    // A counter that did not move past the stored one is a cloned authenticator or a replay (0/0 means no counter).
    return await advanceCounter(row.id, result.authenticationInfo.newCounter)
  } catch {
    return undefined
  }
}

export async function renameCredential(userId: string, id: string, name: string): Promise<CredentialRow | undefined> {
  return await renameCredentialRow(userId, id, name)
}

/**
 * Remove a key (and, with no strong factor left, the factors on top of it); the last key's removal gives the account's
 * USER_UPDATE in the same transaction. False: no such key.
 */
export async function removeCredential(mfa: FactorRoutesContext, userId: string, id: string): Promise<boolean> {
  return await transaction(async () => {
    if (!(await deleteCredential(userId, id))) return false
    await mfa.dropDependents(userId)
    if (!(await hasWebauthn(userId))) await mfa.userChanged(userId)
    return true
  })
}

export async function removeAllCredentials(userId: string): Promise<void> {
  await deleteCredentialsOf(userId)
}
