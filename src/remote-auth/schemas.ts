// TypeBox schemas of the remote-auth endpoints: request bodies and the answers documented in /api/docs.
import { t } from 'elysia'

export const StartSchema = t.Object(
  { fingerprint: t.String({ maxLength: 64, description: 'from the scanned {web_url}/ra/<fingerprint>' }) },
  { examples: [{ fingerprint: 'fingerprint-from-the-qr-code' }] },
)

const HandshakeToken = t.String({ maxLength: 128, description: 'from POST /users/@me/remote-auth' })
const HANDSHAKE = { handshake_token: 'token-from-POST-users-@me-remote-auth' }

export const FinishSchema = t.Object(
  {
    handshake_token: HandshakeToken,
    temporary_token: t.Optional(t.Boolean({ description: 'expiring tokens are not supported: true is refused' })),
  },
  { examples: [{ ...HANDSHAKE, temporary_token: false }] },
)

export const CancelSchema = t.Object({ handshake_token: HandshakeToken }, { examples: [HANDSHAKE] })

export const LoginSchema = t.Object(
  { ticket: t.String({ maxLength: 128, description: 'the ticket of the pending_login frame' }) },
  { examples: [{ ticket: 'ticket-from-pending_login' }] },
)

export const HandshakeAnswer = t.Object(
  { handshake_token: t.String() },
  { description: 'Claimed: the token that finishes or cancels' },
)

export const EncryptedTokenAnswer = t.Object(
  { encrypted_token: t.String({ description: "the user token, RSA-OAEP encrypted to the desktop's key, base64" }) },
  { description: 'The token for the desktop' },
)
