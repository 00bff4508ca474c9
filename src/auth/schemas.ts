// TypeBox schemas of login, registration, recovery, sessions and handoff: request bodies (input types derived from
// them) and the answers documented in /api/docs.
import { t } from 'elysia'
import { clock } from '../core/clock'
import type { FieldError } from '../core/errors'
import { Int } from '../http/docs'
import { bodyCheck, Refine, Snowflake as SnowflakeField } from '../http/validation'
import { PASSWORD_MAX, PASSWORD_MIN, passwordLengthProblem } from '../accounts/password-policy'
import { LoginSettings, PrivateUser, PublicUser } from '../accounts/schemas'
import { usernameProblem } from '../usernames/rules'

const Snowflake = t.String({ pattern: '^\\d{1,20}$' })
const Password = t.String({ maxLength: 256 })
/** The password the examples use (the one of tests/helpers.ts's users). */
const EXAMPLE_PASSWORD = 'correct horse battery staple'

const REQUIRED: FieldError = { code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }
/** A [code, message] problem of a rule's module as a field error. */
const asFieldError = (problem: [code: string, message: string] | null): FieldError | undefined =>
  problem ? { code: problem[0], message: problem[1] } : undefined

const LOGIN_SOURCES = [
  'gift',
  'guild_template',
  'guild_invite',
  'dm_invite',
  'friend_invite',
  'role_subscription',
  'role_subscription_setting',
] as const

/**
 * POST /auth/login. Checked inside the handler (checkLogin): a client that is already logged in gets its session
 * back whatever the body, so the body cannot be refused before the handler runs.
 */
export const LoginSchema = t.Object(
  {
    // Discord's: a blank login is a missing one.
    login: Refine(
      'Login',
      t.String({ maxLength: 320, description: 'e-mail address or phone number (E.164)' }),
      (login) => (login.trim() ? undefined : REQUIRED),
    ),
    password: t.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX }),
    undelete: t.Optional(t.Boolean({ description: 'restore an account that was disabled or scheduled for deletion' })),
    login_source: t.Optional(t.Nullable(t.Union(LOGIN_SOURCES.map((s) => t.Literal(s))))),
    gift_code_sku_id: t.Optional(t.Nullable(SnowflakeField())),
    fingerprint: t.Optional(t.String({ description: 'as X-Fingerprint' })),
  },
  { examples: [{ login: 'ada@example.com', password: EXAMPLE_PASSWORD }] },
)
export type LoginInput = typeof LoginSchema.static

/** The login body as LoginSchema says (every bad field named at once); 400 50035 otherwise. */
export const checkLogin: (body: unknown) => LoginInput = bodyCheck(LoginSchema)

const MIN_AGE_YEARS = 13

/** Whole years since `dateOfBirth` (YYYY-MM-DD), or null when it is not a past date. */
function age(dateOfBirth: string, now: Date): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(dateOfBirth)
  if (!m) return null
  const [y, mo, d] = m.slice(1).map(Number)
  const birth = new Date(Date.UTC(y, mo - 1, d))
  if (birth.getUTCFullYear() !== y || birth.getUTCMonth() !== mo - 1 || birth.getUTCDate() !== d || birth > now)
    return null
  let years = now.getUTCFullYear() - y
  if (now.getUTCMonth() < mo - 1 || (now.getUTCMonth() === mo - 1 && now.getUTCDate() < d)) years -= 1
  return years
}

function dateOfBirthProblem(dateOfBirth: string): FieldError | undefined {
  const years = age(dateOfBirth, clock.date())
  if (years === null) return { code: 'DATE_OF_BIRTH_INVALID', message: 'Not a valid date of birth.' }
  if (years < MIN_AGE_YEARS)
    return {
      code: 'DATE_OF_BIRTH_IS_UNDERAGE',
      message: `You need to be ${MIN_AGE_YEARS} or older to use this service.`,
    }
  return undefined
}

/** Its form (the address is compared trimmed and in lower case, as it is stored). */
function emailProblem(email: string): FieldError | undefined {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim().toLowerCase())
    ? undefined
    : { code: 'EMAIL_TYPE_INVALID_EMAIL', message: 'Not a well formed email address.' }
}

export const RegisterSchema = t.Object(
  {
    // Empty: not given (then global_name is required, and a username is made from it). Taken: the handler's.
    username: t.Optional(
      Refine(
        'RegisterUsername',
        t.String({
          maxLength: 64,
          description: 'compared in lower case: 2-32 of a-z, 0-9, _ and . (no ".."), no reserved word',
        }),
        (username) => (username === '' ? undefined : asFieldError(usernameProblem(username.toLowerCase()))),
      ),
    ),
    global_name: t.Optional(t.Nullable(t.String({ minLength: 1, maxLength: 32 }))),
    email: t.Optional(Refine('RegisterEmail', t.String({ maxLength: 254 }), emailProblem)),
    phone_token: t.Optional(t.String({ maxLength: 256 })),
    password: t.Optional(
      Refine(
        'RegisterPassword',
        t.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX, description: 'not a common password' }),
        // Its length only: the common-password look-up runs in the handler, after the attempt is counted.
        (password) => asFieldError(passwordLengthProblem(password)),
      ),
    ),
    date_of_birth: t.Optional(
      Refine(
        'DateOfBirth',
        t.String({ maxLength: 10, description: `YYYY-MM-DD, at least ${MIN_AGE_YEARS} years ago` }),
        dateOfBirthProblem,
      ),
    ),
    fingerprint: t.Optional(t.String({ maxLength: 64 })),
    invite: t.Optional(t.Nullable(t.String({ maxLength: 64 }))),
    guild_template_code: t.Optional(t.Nullable(t.String({ maxLength: 64 }))),
    gift_code_sku_id: t.Optional(t.Nullable(SnowflakeField())),
    consent: t.Optional(t.Boolean({ description: 'required where GET /auth/location-metadata says consent_required' })),
    promotional_email_opt_in: t.Optional(t.Boolean()),
  },
  {
    examples: [
      {
        username: 'grace_hopper',
        global_name: 'Grace',
        email: 'grace@example.com',
        password: EXAMPLE_PASSWORD,
        date_of_birth: '1990-12-09',
        consent: true,
      },
    ],
  },
)
export type RegisterInput = typeof RegisterSchema.static

export const VerifySchema = t.Object(
  {
    token: t.String({ maxLength: 256, description: "the token of the verification e-mail's link" }),
    captcha_key: t.Optional(t.Nullable(t.String())),
  },
  { examples: [{ token: 'token-from-the-verification-link' }] },
)
export const TokenSchema = t.Object(
  { token: t.String({ maxLength: 256, description: "the token of the new-location e-mail's link" }) },
  { examples: [{ token: 'token-from-the-new-location-link' }] },
)
const Phone = t.String({ maxLength: 20, description: 'E.164' })
export const PhoneSchema = t.Object({ phone: Phone }, { examples: [{ phone: '+15555550123' }] })
export const PhoneCodeSchema = t.Object(
  { phone: Phone, code: t.String({ maxLength: 16, description: 'the texted code' }) },
  { examples: [{ phone: '+15555550123', code: '123456' }] },
)
export const PasswordCheckSchema = t.Object(
  { password: t.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX }) },
  { examples: [{ password: EXAMPLE_PASSWORD }] },
)
const HandoffKey = t.String({ minLength: 1, maxLength: 256, description: 'a random key the receiving client keeps' })
export const HandoffSchema = t.Object({ key: HandoffKey }, { examples: [{ key: 'key-the-other-client-made' }] })
export const HandoffExchangeSchema = t.Object(
  { key: HandoffKey, handoff_token: t.String({ maxLength: 256, description: 'from POST /auth/handoff' }) },
  { examples: [{ key: 'key-the-other-client-made', handoff_token: 'token-from-POST-auth-handoff' }] },
)

const PUSH = { provider: 'gcm', token: 'push-token-of-this-device' }

export const LogoutSchema = t.Optional(
  t.Nullable(
    t.Object({
      provider: t.Optional(t.Nullable(t.String({ maxLength: 64 }))),
      token: t.Optional(t.Nullable(t.String({ maxLength: 4096, description: 'the push token to forget' }))),
      voip_provider: t.Optional(t.Nullable(t.String({ maxLength: 64 }))),
      voip_token: t.Optional(t.Nullable(t.String({ maxLength: 4096 }))),
    }),
    { examples: [PUSH] },
  ),
)

export const DeviceSchema = t.Object(
  {
    provider: t.String({ minLength: 1, maxLength: 64 }),
    token: t.String({ minLength: 1, maxLength: 4096 }),
    voip_provider: t.Optional(t.Nullable(t.String({ maxLength: 64 }))),
    voip_token: t.Optional(t.Nullable(t.String({ maxLength: 4096 }))),
  },
  { examples: [PUSH] },
)

export const ForgotSchema = t.Object(
  { login: t.String({ minLength: 1, maxLength: 320, description: 'e-mail address or phone number (E.164)' }) },
  { examples: [{ login: 'ada@example.com' }] },
)

const NEW_PASSWORD = 'a new correct horse battery staple'

export const ResetSchema = t.Object(
  {
    token: t.String({
      maxLength: 256,
      description: "the reset link's token (e-mail), or the phone token of a texted code",
    }),
    password: Password,
    source: t.Optional(t.Nullable(t.String({ maxLength: 256 }))),
    method: t.Optional(
      t.String({ maxLength: 16, description: 'with MFA: the factor of `code` (totp, sms, backup, webauthn)' }),
    ),
    ticket: t.Optional(t.String({ maxLength: 256, description: 'with MFA: the ticket of the first answer' })),
    code: t.Optional(t.String({ maxLength: 64 * 1024 })),
  },
  { examples: [{ token: 'token-from-the-reset-link', password: NEW_PASSWORD }] },
)
export type ResetInput = typeof ResetSchema.static

export const ResetCheckSchema = t.Object(
  {
    token: t.String({
      maxLength: 256,
      description: "the reset link's token (e-mail), or the phone token of a texted code",
    }),
  },
  { examples: [{ token: 'token-from-the-reset-link' }] },
)

export const RevertSchema = t.Object(
  {
    token: t.String({ maxLength: 256, description: "the revert link's token (sent to the old address)" }),
    password: Password,
  },
  { examples: [{ token: 'token-from-the-revert-link', password: NEW_PASSWORD }] },
)
export const PasswordSchema = t.Object({ password: Password }, { examples: [{ password: EXAMPLE_PASSWORD }] })
export const SessionsLogoutSchema = t.Object(
  {
    session_id_hashes: t.Array(t.String({ maxLength: 64 }), {
      minItems: 1,
      maxItems: 64,
      description: 'id_hash values of GET /auth/sessions',
    }),
  },
  { examples: [{ session_id_hashes: ['dB4m/hBZlDYr0ankGJPAtvT8DU8JPdNKUZPyzU3o7nY='] }] },
)

export const PatchMeSchema = t.Object(
  {
    email: t.Optional(t.String({ maxLength: 254, description: 'with password; elevated when MFA is on' })),
    password: t.Optional(
      t.String({ maxLength: 256, description: 'the current password (to change the e-mail or the password)' }),
    ),
    new_password: t.Optional(Password),
    global_name: t.Optional(t.Nullable(t.String({ maxLength: 32 }))),
  },
  { examples: [{ global_name: 'Ada' }] },
)

// ---- answers (documentation)

const LoginSuccess = t.Object(
  {
    user_id: Snowflake,
    token: t.String(),
    user_settings: LoginSettings,
    required_actions: t.Optional(t.Array(t.String())),
  },
  { description: 'Logged in' },
)

export const MfaRequired = t.Object(
  {
    user_id: Snowflake,
    mfa: t.Literal(true),
    ticket: t.String(),
    totp: t.Boolean(),
    sms: t.Boolean(),
    backup: t.Boolean(),
    webauthn: t.Nullable(t.String({ description: 'WebAuthn assertion options (JSON)' })),
  },
  { description: 'A second factor is required: answer with POST /auth/mfa/{type}' },
)

export const LoginAnswer = t.Union([LoginSuccess, MfaRequired], {
  description: 'Logged in, or a second factor is required',
})
export const RegisterAnswer = t.Object(
  { token: t.String(), show_verification_form: t.Optional(t.Boolean()) },
  { description: 'Registered and logged in' },
)
export const VerifyAnswer = t.Object(
  { token: t.String(), user_id: Snowflake },
  { description: 'Verified and logged in' },
)
export const PhoneTokenAnswer = t.Object(
  { token: t.String({ description: 'phone_token for registration, phone change or reset' }) },
  { description: 'Verified' },
)
export const FingerprintAnswer = t.Object({ fingerprint: t.String() }, { description: 'A fingerprint' })
export const LocationAnswer = t.Object(
  {
    country_code: t.String(),
    consent_required: t.Boolean(),
    promotional_email_opt_in: t.Object({ required: t.Boolean(), pre_checked: t.Boolean() }),
  },
  { description: 'Country and consent rules' },
)
export const PasswordCheckAnswer = t.Object(
  { valid: t.Boolean(), password_strength: Int({ minimum: 0, maximum: 4 }) },
  { description: 'Verdict' },
)
export const HandoffAnswer = t.Object({ handoff_token: t.String() }, { description: 'A handoff token' })
export const HandoffExchangeAnswer = t.Object({ token: t.String(), user: PublicUser }, { description: 'Logged in' })
export const SessionsAnswer = t.Object(
  {
    user_sessions: t.Array(
      t.Object({
        id_hash: t.String(),
        approx_last_used_time: t.String({ format: 'date-time' }),
        client_info: t.Object({
          os: t.Nullable(t.String()),
          platform: t.Nullable(t.String()),
          location: t.Nullable(t.String()),
        }),
      }),
    ),
  },
  { description: 'Sessions, most recently used first' },
)
export const ResetAnswer = t.Union(
  [t.Object({ token: t.String(), user_id: Snowflake, user_settings: LoginSettings }), MfaRequired],
  { description: 'New password set and logged in, or a second factor is required' },
)
export const RevertAnswer = t.Object({ email: t.String() }, { description: 'The account is back on this address' })
export const PatchMeAnswer = t.Composite(
  [PrivateUser, t.Object({ token: t.Optional(t.String({ description: 'after a password change' })) })],
  {
    description: 'The changed user',
  },
)
