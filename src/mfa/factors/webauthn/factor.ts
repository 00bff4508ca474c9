// Security keys and passkeys (WebAuthn) as a second factor: strong (they turn MFA on), authenticator type 1. Each
// ticket of a user with a key carries a fresh assertion challenge, which the login answer (`webauthn`) and the 60003
// method hand to the client and the assertion must sign.
import type { SecondFactor } from '../../factor'
import { AuthenticatorType } from '../../store'
import { webauthnEndpoints } from './routes'
import { authenticationOptions, hasWebauthn, removeAllCredentials, verifyAssertion } from './webauthn'

export const webauthn: SecondFactor = {
  type: 'webauthn',
  authenticatorType: AuthenticatorType.WEBAUTHN,
  strong: true,
  page: { label: 'Security key or passkey', input: 'assertion', submit: 'Use security key or passkey' },
  enrolled: hasWebauthn,
  async challenge(userId) {
    const options = await authenticationOptions(userId)
    return { ticket: options.challenge, wire: options.json }
  },
  login: (_on, challenge) => challenge,
  method: (_on, challenge) => (challenge ? { type: 'webauthn', challenge } : undefined),
  verify: async (ticket, code) =>
    !!ticket.challenge && !!(await verifyAssertion(code, ticket.challenge, ticket.userId)),
  remove: removeAllCredentials,
  endpoints: webauthnEndpoints,
}
