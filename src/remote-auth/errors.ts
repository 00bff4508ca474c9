// Remote-auth errors. Discord documents no JSON codes for these; they are form errors naming the field at fault, and
// every failure of a field answers the same way (unknown, used, expired, another user's, desktop gone).
import { formError } from '../core/errors'

export const invalidFingerprint = () =>
  formError({ fingerprint: ['REMOTE_AUTH_INVALID_FINGERPRINT', 'Invalid or expired remote auth session.'] })

export const invalidHandshakeToken = () =>
  formError({ handshake_token: ['REMOTE_AUTH_INVALID_HANDSHAKE_TOKEN', 'Invalid or expired handshake token.'] })

export const invalidTicket = () => formError({ ticket: ['REMOTE_AUTH_INVALID_TICKET', 'Invalid or expired ticket.'] })

export const temporaryTokenUnsupported = () =>
  formError({ temporary_token: ['REMOTE_AUTH_TEMPORARY_TOKEN_UNSUPPORTED', 'Temporary tokens are not supported.'] })
