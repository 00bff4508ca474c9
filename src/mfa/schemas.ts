// TypeBox schemas of MFA: request bodies and the answers documented in /api/docs.
import { t } from 'elysia'
import { LoginSettings } from '../accounts/schemas'

const Ticket = t.String({ maxLength: 256 })
const Code = t.String({ maxLength: 64 * 1024 })
const Password = t.String({ maxLength: 256 })
const LoginSource = t.Optional(t.Nullable(t.String({ maxLength: 64 })))
const Sku = t.Optional(t.Nullable(t.String({ pattern: '^\\d{1,20}$' })))

export const TicketSchema = t.Object({ ticket: Ticket })

export const MfaCodeSchema = t.Object({
  ticket: Ticket,
  code: Code,
  login_instance_id: t.Optional(t.Nullable(t.String({ maxLength: 256 }))),
  login_source: LoginSource,
  gift_code_sku_id: Sku,
})

export const ConditionalFinishSchema = t.Object({ ticket: Ticket, credential: Code, login_source: LoginSource, gift_code_sku_id: Sku })

export const ElevationSchema = t.Object({ ticket: Ticket, mfa_type: t.String({ maxLength: 16 }), data: Code })

export const TotpEnableSchema = t.Object({ secret: t.String({ maxLength: 128 }), code: t.String({ maxLength: 16 }), password: Password })

export const CodesSchema = t.Optional(
  t.Object({ regenerate: t.Optional(t.Boolean()), key: t.Optional(t.String({ maxLength: 256 })), nonce: t.Optional(t.String({ maxLength: 256 })) }),
)

export const PasswordSchema = t.Object({ password: Password })

export const PhoneSchema = t.Object({
  phone: t.Optional(t.String({ maxLength: 20 })),
  phone_token: t.Optional(t.String({ maxLength: 256 })),
  password: t.Optional(Password),
  change_phone_reason: t.Optional(t.String({ maxLength: 64 })),
})

/** Start (no body) or finish registering a security key: checked in the handler, which takes any of these. */
export const CredentialSchema = t.Optional(
  t.Object({ ticket: t.Optional(t.String()), name: t.Optional(t.String({ minLength: 1, maxLength: 32 })), credential: t.Optional(t.String()) }),
)

export const RenameSchema = t.Object({ name: t.String({ minLength: 1, maxLength: 32 }) })

// ---- answers (documentation)

const BackupCode = t.Object({ user_id: t.String(), code: t.String({ description: '"********" unless just generated' }), consumed: t.Boolean() })
const Authenticator = t.Object({ id: t.String(), name: t.String(), type: t.Integer({ description: '1: WebAuthn' }) }, { description: 'A security key' })

export const MfaLoginAnswer = t.Object(
  { token: t.String(), user_settings: LoginSettings, required_actions: t.Optional(t.Array(t.String())) },
  { description: 'Logged in' },
)
export const LoggedIn = t.Object(
  { user_id: t.String(), token: t.String(), user_settings: LoginSettings, required_actions: t.Optional(t.Array(t.String())) },
  { description: 'Logged in' },
)
export const MaskedPhoneAnswer = t.Object({ phone: t.String({ description: 'the masked number' }) }, { description: 'Code sent' })
const ChallengeAnswer = t.Object(
  { ticket: t.String(), challenge: t.String({ description: 'WebAuthn options (JSON)' }) },
  { description: 'A ticket and its WebAuthn challenge' },
)
export const ConditionalStartAnswer = t.Union([ChallengeAnswer, LoggedIn], { description: 'A challenge, or the session of a client already logged in' })
export const TokenAnswer = t.Object({ token: t.String() }, { description: 'A new token' })
export const TotpEnableAnswer = t.Object({ token: t.String(), backup_codes: t.Array(BackupCode) }, { description: 'Enabled; the new token and backup codes' })
export const BackupCodesAnswer = t.Object({ backup_codes: t.Array(BackupCode) }, { description: 'Backup codes' })
export const CredentialAnswer = t.Union(
  [ChallengeAnswer, t.Composite([Authenticator, t.Object({ backup_codes: t.Optional(t.Array(BackupCode)) })])],
  { description: 'A challenge (start), or the registered key (finish)' },
)
export const AuthenticatorAnswer = Authenticator
export const AuthenticatorsAnswer = t.Array(Authenticator, { description: 'Security keys' })
