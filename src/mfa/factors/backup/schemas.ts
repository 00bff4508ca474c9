// Backup codes' body and answers (also part of TOTP's and a first security key's enrolment answers).
import { t } from 'elysia'

export const CodesSchema = t.Optional(
  t.Object(
    {
      regenerate: t.Optional(t.Boolean({ description: 'new codes (the old ones stop working)' })),
      key: t.Optional(t.String({ maxLength: 256 })),
      nonce: t.Optional(t.String({ maxLength: 256 })),
    },
    { examples: [{ regenerate: false }] },
  ),
)

export const BackupCode = t.Object({
  user_id: t.String(),
  code: t.String({ description: '"********" unless just generated' }),
  consumed: t.Boolean(),
})
export const BackupCodesAnswer = t.Object({ backup_codes: t.Array(BackupCode) }, { description: 'Backup codes' })
