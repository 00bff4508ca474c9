// TypeBox schemas of the remote-auth endpoints: request bodies and the answers documented in /api/docs.
import { t } from 'elysia'

export const StartSchema = t.Object({ fingerprint: t.String({ maxLength: 64, description: 'from the scanned {web_url}/ra/<fingerprint>' }) })

export const FinishSchema = t.Object({
  handshake_token: t.String({ maxLength: 128 }),
  temporary_token: t.Optional(t.Boolean({ description: 'expiring tokens are not supported: true is refused' })),
})

export const CancelSchema = t.Object({ handshake_token: t.String({ maxLength: 128 }) })

export const LoginSchema = t.Object({ ticket: t.String({ maxLength: 128 }) })

export const HandshakeAnswer = t.Object({ handshake_token: t.String() }, { description: 'Claimed: the token that finishes or cancels' })

export const EncryptedTokenAnswer = t.Object(
  { encrypted_token: t.String({ description: "the user token, RSA-OAEP encrypted to the desktop's key, base64" }) },
  { description: 'The token for the desktop' },
)
