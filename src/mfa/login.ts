// What login needs from MFA: whether the user must pass a second factor, and the ticket/methods to offer.
// The MFA domain (src/mfa/) owns tickets and factors; login only calls this.

export type MfaLoginChallenge = { ticket: string; totp: boolean; sms: boolean; backup: boolean; webauthn: string | null }

/** null when the user has no MFA factor enrolled. MFA enrolment does not exist yet, so no user has one. */
export async function mfaChallengeFor(_userId: string): Promise<MfaLoginChallenge | null> {
  return null
}
