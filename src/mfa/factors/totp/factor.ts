// An authenticator app (TOTP, RFC 6238) as a second factor: strong (it turns MFA on), authenticator type 2. Discord's
// totp method also takes a backup code when the user has some (`backup_codes_allowed`).
import type { SecondFactor } from '../../factor'
import { AuthenticatorType } from '../../store'
import { consumeBackupCode } from '../backup/backup-codes'
import { backupCodes } from '../backup/factor'
import { totpEndpoints } from './routes'
import { hasTotp, removeTotp, verifyTotp } from './totp'

export const totp: SecondFactor = {
  type: 'totp',
  authenticatorType: AuthenticatorType.TOTP,
  strong: true,
  page: { label: 'Authenticator app', prompt: 'Six-digit code from your authenticator app', input: 'digits' },
  enrolled: hasTotp,
  method: (on) => (on.has('totp') ? { type: 'totp', backup_codes_allowed: on.has(backupCodes.type) } : undefined),
  async verify(ticket, code) {
    const userId = ticket.userId!
    const verdict = await verifyTotp(userId, code)
    if (verdict !== 'wrong') return verdict === 'ok' || 'used'
    return (await hasTotp(userId)) && (await consumeBackupCode(userId, code))
  },
  remove: removeTotp,
  endpoints: totpEndpoints,
}
