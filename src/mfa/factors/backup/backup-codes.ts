// Backup codes: ten 8-character codes, single use, argon2id-hashed (ASVS 6.5.2: under 112 bits of entropy needs a
// password hash). Shown in clear only when generated.
import { randomInt } from 'node:crypto'
import { hashPassword, verifyPassword } from '../../../accounts/passwords'
import {
  backupCodesOf,
  consumeBackupCodeRow,
  deleteBackupCodes,
  hasUnusedBackupCode,
  replaceBackupCodes,
  unusedBackupCodes,
} from '../../store'

const BACKUP_CODE_COUNT = 10
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

export type BackupCodeView = { user_id: string; code: string; consumed: boolean }

function newCode(): string {
  return Array.from({ length: 8 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('')
}

export type NewBackupCodes = { codes: string[]; hashes: string[] }

/** Ten new codes and their hashes (slow: argon2id each), to store with storeBackupCodes. */
export async function newBackupCodes(): Promise<NewBackupCodes> {
  const codes = Array.from({ length: BACKUP_CODE_COUNT }, newCode)
  return { codes, hashes: await Promise.all(codes.map((c) => hashPassword(c))) }
}

/** Replace the user's codes (in the caller's transaction when it has one open); returns them in clear. */
export async function storeBackupCodes(userId: string, fresh: NewBackupCodes): Promise<BackupCodeView[]> {
  await replaceBackupCodes(userId, fresh.hashes)
  return fresh.codes.map((code) => ({ user_id: userId, code, consumed: false }))
}

/** Replace the user's codes with ten new ones; returns them in clear (the only time they are). */
export async function regenerateBackupCodes(userId: string): Promise<BackupCodeView[]> {
  return await storeBackupCodes(userId, await newBackupCodes())
}

/** The user's codes as stored: which are used; the codes themselves are masked (only their hashes are kept). */
export async function listBackupCodes(userId: string): Promise<BackupCodeView[]> {
  return (await backupCodesOf(userId)).map((r) => ({ user_id: userId, code: '********', consumed: r.consumed }))
}

export async function hasBackupCodes(userId: string): Promise<boolean> {
  return await hasUnusedBackupCode(userId)
}

/** Use a code: true once, even when the same code is sent in parallel. */
export async function consumeBackupCode(userId: string, input: string): Promise<boolean> {
  const code = input.toLowerCase().replace(/[\s-]/g, '')
  if (!/^[a-z0-9]{8}$/.test(code)) return false
  for (const row of await unusedBackupCodes(userId)) {
    if (!(await verifyPassword(code, row.codeHash))) continue
    return await consumeBackupCodeRow(row.id)
  }
  return false
}

export async function removeBackupCodes(userId: string): Promise<void> {
  await deleteBackupCodes(userId)
}
