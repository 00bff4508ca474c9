// TypeBox schemas of MFA's own routes (a factor's code for a ticket, elevation, the phone) and what the factors'
// schemas share (factors/<name>/schemas.ts hold each factor's own): request bodies and the answers documented in
// /api/docs.
import { t } from 'elysia'
import { LoginSettings } from '../accounts/schemas'
import { Snowflake } from '../http/validation'

export const Ticket = t.String({ maxLength: 256 })
export const Password = t.String({ maxLength: 256 })
export const LoginSource = t.Optional(t.Nullable(t.String({ maxLength: 64 })))
export const Sku = t.Optional(t.Nullable(Snowflake()))

export const EXAMPLE_PASSWORD = 'correct horse battery staple'
export const LOGIN_TICKET = 'ticket-from-the-login-answer'

/** POST /auth/mfa/<type>'s path parameter as documented: the factors' types (the route answers 404 for others). */
export const FactorTypeParam = (types: string[]) =>
  t.Unsafe<string>({ type: 'string', enum: types, description: 'the second factor' })

export const MfaCodeSchema = t.Object(
  {
    ticket: t.String({ maxLength: 256, description: 'the ticket of the login (or reset) answer' }),
    code: t.String({
      maxLength: 64 * 1024,
      description: "the factor's code, or its assertion (WebAuthn: the credential's JSON)",
    }),
    login_instance_id: t.Optional(t.Nullable(t.String({ maxLength: 256 }))),
    login_source: LoginSource,
    gift_code_sku_id: Sku,
  },
  { examples: [{ ticket: LOGIN_TICKET, code: '123456' }] },
)

export const ElevationSchema = t.Object(
  {
    ticket: t.String({ maxLength: 256, description: "the ticket of the 401 60003 answer's mfa object" }),
    mfa_type: t.String({ maxLength: 16, description: "one of the 60003 answer's methods (its type)" }),
    data: t.String({ maxLength: 64 * 1024, description: "the method's code, the password, or the assertion (JSON)" }),
  },
  { examples: [{ ticket: 'ticket-from-the-60003-answer', mfa_type: 'totp', data: '123456' }] },
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

// ---- answers (documentation)

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
export const TokenAnswer = t.Object({ token: t.String() }, { description: 'A new token' })
