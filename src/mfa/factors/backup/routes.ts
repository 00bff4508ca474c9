// Backup codes: view them (masked, with their consumed state) or make ten new ones, elevated.
import { endpoint } from '../../../http/endpoint'
import type { FactorRoutesContext } from '../../factor'
import { notEnrolled } from '../../errors'
import { listBackupCodes, regenerateBackupCodes } from './backup-codes'
import { BackupCodesAnswer, CodesSchema } from './schemas'

export const backupCodeEndpoints = (mfa: FactorRoutesContext) => [
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/mfa/codes-verification',
      auth: 'user',
      tag: 'mfa',
      summary: 'View or regenerate backup codes (elevated)',
      body: CodesSchema,
      answers: { 200: BackupCodesAnswer },
    },
    async ({ caller: me, request, body }) => {
      if (!(await mfa.enabled(me.userId))) throw notEnrolled()
      await mfa.requireElevation(me, request)
      return {
        backup_codes: body?.regenerate ? await regenerateBackupCodes(me.userId) : await listBackupCodes(me.userId),
      }
    },
  ),
]
