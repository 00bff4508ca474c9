// TypeBox schemas of MFA: request bodies and the answers documented in /api/docs.
import { t } from 'elysia'
import { Int } from '../http/docs'
import { LoginSettings } from '../accounts/schemas'

const Ticket = t.String({ maxLength: 256 })
const Password = t.String({ maxLength: 256 })
const LoginSource = t.Optional(t.Nullable(t.String({ maxLength: 64 })))
const Sku = t.Optional(t.Nullable(t.String({ pattern: '^\\d{1,20}$' })))

const EXAMPLE_PASSWORD = 'correct horse battery staple'
const LOGIN_TICKET = 'ticket-from-the-login-answer'

export const TicketSchema = t.Object({ ticket: Ticket }, { examples: [{ ticket: LOGIN_TICKET }] })

export const MfaCodeSchema = t.Object(
  {
    ticket: t.String({ maxLength: 256, description: 'the ticket of the login (or reset) answer' }),
    code: t.String({
      maxLength: 64 * 1024,
      description: 'the TOTP, SMS or backup code, or the WebAuthn assertion (JSON)',
    }),
    login_instance_id: t.Optional(t.Nullable(t.String({ maxLength: 256 }))),
    login_source: LoginSource,
    gift_code_sku_id: Sku,
  },
  { examples: [{ ticket: LOGIN_TICKET, code: '123456' }] },
)

export const ConditionalFinishSchema = t.Object(
  {
    ticket: t.String({ maxLength: 256, description: 'from POST /auth/conditional/start' }),
    credential: t.String({
      maxLength: 64 * 1024,
      description: "the authenticator's assertion (PublicKeyCredential JSON)",
    }),
    login_source: LoginSource,
    gift_code_sku_id: Sku,
  },
  {
    examples: [
      {
        ticket: 'ticket-from-conditional-start',
        credential: '{"id":"…","rawId":"…","type":"public-key","response":{}}',
      },
    ],
  },
)

export const ElevationSchema = t.Object(
  {
    ticket: t.String({ maxLength: 256, description: "the ticket of the 401 60003 answer's mfa object" }),
    mfa_type: t.String({ maxLength: 16, description: 'totp, sms, backup, webauthn or password' }),
    data: t.String({ maxLength: 64 * 1024, description: 'the code, the password, or the WebAuthn assertion (JSON)' }),
  },
  { examples: [{ ticket: 'ticket-from-the-60003-answer', mfa_type: 'totp', data: '123456' }] },
)

export const TotpEnableSchema = t.Object(
  {
    secret: t.String({ maxLength: 128, description: 'base32 secret the client generated and showed' }),
    code: t.String({ maxLength: 16, description: 'the current code for it' }),
    password: Password,
  },
  { examples: [{ secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', code: '123456', password: EXAMPLE_PASSWORD }] },
)

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

export const PasswordSchema = t.Object({ password: Password }, { examples: [{ password: EXAMPLE_PASSWORD }] })

export const PhoneSchema = t.Object(
  {
    phone: t.Optional(t.String({ maxLength: 20, description: 'step one: the new number (E.164); a code is texted' })),
    phone_token: t.Optional(
      t.String({ maxLength: 256, description: 'step two: from POST /phone-verifications/verify, with password' }),
    ),
    password: t.Optional(Password),
    change_phone_reason: t.Optional(t.String({ maxLength: 64 })),
  },
  { examples: [{ phone: '+15555550123' }] },
)

/** Start (no body) or finish registering a security key: checked in the handler, which takes any of these. */
export const CredentialSchema = t.Optional(
  t.Object(
    {
      ticket: t.Optional(t.String({ description: 'finish: the ticket of the start' })),
      name: t.Optional(t.String({ minLength: 1, maxLength: 32, description: 'finish: a name for the key' })),
      credential: t.Optional(
        t.String({ description: "finish: the authenticator's attestation (PublicKeyCredential JSON)" }),
      ),
    },
    {
      description: 'empty to start (a ticket and the creation options), or ticket, name and credential to finish',
      examples: [{}],
    },
  ),
)

export const RenameSchema = t.Object(
  { name: t.String({ minLength: 1, maxLength: 32 }) },
  { examples: [{ name: 'YubiKey 5' }] },
)

// ---- answers (documentation)

const BackupCode = t.Object({
  user_id: t.String(),
  code: t.String({ description: '"********" unless just generated' }),
  consumed: t.Boolean(),
})
const Authenticator = t.Object(
  { id: t.String(), name: t.String(), type: Int({ description: '1: WebAuthn' }) },
  { description: 'A security key' },
)

export const MfaLoginAnswer = t.Object(
  { token: t.String(), user_settings: LoginSettings, required_actions: t.Optional(t.Array(t.String())) },
  { description: 'Logged in' },
)
export const LoggedIn = t.Object(
  {
    user_id: t.String(),
    token: t.String(),
    user_settings: LoginSettings,
    required_actions: t.Optional(t.Array(t.String())),
  },
  { description: 'Logged in' },
)
export const MaskedPhoneAnswer = t.Object(
  { phone: t.String({ description: 'the masked number' }) },
  { description: 'Code sent' },
)
const ChallengeAnswer = t.Object(
  { ticket: t.String(), challenge: t.String({ description: 'WebAuthn options (JSON)' }) },
  { description: 'A ticket and its WebAuthn challenge' },
)
export const ConditionalStartAnswer = t.Union([ChallengeAnswer, LoggedIn], {
  description: 'A challenge, or the session of a client already logged in',
})
export const TokenAnswer = t.Object({ token: t.String() }, { description: 'A new token' })
export const TotpEnableAnswer = t.Object(
  { token: t.String(), backup_codes: t.Array(BackupCode) },
  { description: 'Enabled; the new token and backup codes' },
)
export const BackupCodesAnswer = t.Object({ backup_codes: t.Array(BackupCode) }, { description: 'Backup codes' })
export const CredentialAnswer = t.Union(
  [ChallengeAnswer, t.Composite([Authenticator, t.Object({ backup_codes: t.Optional(t.Array(BackupCode)) })])],
  { description: 'A challenge (start), or the registered key (finish)' },
)
export const AuthenticatorAnswer = Authenticator
export const AuthenticatorsAnswer = t.Array(Authenticator, { description: 'Security keys' })
