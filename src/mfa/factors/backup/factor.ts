// Backup codes as a second factor: ten single-use codes that come with the first strong factor (TOTP's enrolment, the
// first security key) and go with the last one. TOTP's method also takes them (factors/totp).
import type { SecondFactor } from '../../factor'
import { consumeBackupCode, hasBackupCodes, removeBackupCodes } from './backup-codes'
import { backupCodeEndpoints } from './routes'

export const backupCodes: SecondFactor = {
  type: 'backup',
  strong: false,
  page: { label: 'Backup code', prompt: 'Eight-character backup code', input: 'text' },
  enrolled: hasBackupCodes,
  verify: (ticket, code) => consumeBackupCode(ticket.userId!, code),
  remove: removeBackupCodes,
  endpoints: backupCodeEndpoints,
}
