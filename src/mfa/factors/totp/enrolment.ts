// TOTP turned on and off, each change in one transaction with what follows from it: the sessions it ends, the new
// token of the caller's session and the account's USER_UPDATE are given inside it (with several nodes, outbox rows of
// it: a node killed right after its COMMIT loses none of them).
import { endSessions, replaceSession } from '../../../accounts/sessions'
import type { UserCaller } from '../../../core/caller'
import { transaction } from '../../../db/client'
import { alreadyEnrolled } from '../../errors'
import type { FactorRoutesContext } from '../../factor'
import { type BackupCodeView, type NewBackupCodes, storeBackupCodes } from '../backup/backup-codes'
import { removeTotp, saveTotp } from './totp'

/**
 * Enrol the secret (its first code matched `step`) with its backup codes (hashed already): a crash never leaves TOTP
 * on without them. New credentials, new token: every other session ends, this one continues under the token returned.
 */
export async function enableTotp(
  mfa: FactorRoutesContext,
  me: UserCaller,
  secret: string,
  step: number,
  fresh: NewBackupCodes,
): Promise<{ token: string; backup_codes: BackupCodeView[] }> {
  return await transaction(async () => {
    if (!(await saveTotp(me.userId, secret, step))) throw alreadyEnrolled()
    const backup_codes = await storeBackupCodes(me.userId, fresh)
    await endSessions(me.userId, me.sessionId)
    const token = await replaceSession(me)
    await mfa.userChanged(me.userId)
    return { token, backup_codes }
  })
}

/** Remove TOTP (and, with no strong factor left, the factors on top of it); the caller's session gets a new token. */
export async function disableTotp(mfa: FactorRoutesContext, me: UserCaller): Promise<string> {
  return await transaction(async () => {
    await removeTotp(me.userId)
    await mfa.dropDependents(me.userId)
    const token = await replaceSession(me)
    await mfa.userChanged(me.userId)
    return token
  })
}
