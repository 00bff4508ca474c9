// Security keys and passkeys: registration, renaming, passwordless login; bodies and answers.
import { t } from 'elysia'
import { Int } from '../../../http/docs'
import { LoggedIn, LoginSource, Sku } from '../../schemas'
import { BackupCode } from '../backup/schemas'

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

/** A security key's id in the path (from GET /users/@me/mfa/webauthn/credentials). */
export const KeyIdParam = t.String({ description: 'security key id (from GET /users/@me/mfa/webauthn/credentials)' })

// ---- answers (documentation)

const Authenticator = t.Object(
  { id: t.String(), name: t.String(), type: Int({ description: '1: WebAuthn' }) },
  { description: 'A security key' },
)
const ChallengeAnswer = t.Object(
  { ticket: t.String(), challenge: t.String({ description: 'WebAuthn options (JSON)' }) },
  { description: 'A ticket and its WebAuthn challenge' },
)
export const ConditionalStartAnswer = t.Union([ChallengeAnswer, LoggedIn], {
  description: 'A challenge, or the session of a client already logged in',
})
export const CredentialAnswer = t.Union(
  [ChallengeAnswer, t.Composite([Authenticator, t.Object({ backup_codes: t.Optional(t.Array(BackupCode)) })])],
  { description: 'A challenge (start), or the registered key (finish)' },
)
export const AuthenticatorAnswer = Authenticator
export const AuthenticatorsAnswer = t.Array(Authenticator, { description: 'Security keys' })
