// TOTP's enrolment: the body and the answer.
import { t } from 'elysia'
import { EXAMPLE_PASSWORD, Password } from '../../schemas'
import { BackupCode } from '../backup/schemas'

export const TotpEnableSchema = t.Object(
  {
    secret: t.String({ maxLength: 128, description: 'base32 secret the client generated and showed' }),
    code: t.String({ maxLength: 16, description: 'the current code for it' }),
    password: Password,
  },
  { examples: [{ secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', code: '123456', password: EXAMPLE_PASSWORD }] },
)

export const TotpEnableAnswer = t.Object(
  { token: t.String(), backup_codes: t.Array(BackupCode) },
  { description: 'Enabled; the new token and backup codes' },
)
