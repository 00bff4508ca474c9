// The errors of provisional accounts: Discord's 5300xx codes of the Social SDK's token endpoints ("Using Provisional
// Accounts": error handling), with Discord's error body {code, message}. All 400 but a wrong client secret (401).
import { ApiError } from '../core/errors'

const e =
  (code: number, message: string, status = 400) =>
  () =>
    new ApiError(status, code, message)

export const ProvisionalErrors = {
  /** No identity provider of this type for the application (Steam, EOS, Unity: never; OIDC: none configured). */
  notConfigured: (what: string) =>
    new ApiError(400, 530000, `Application is not configured for provisional accounts through ${what}`),
  expired: e(530001, 'The ID token has expired'),
  badIssuer: e(530002, "The ID token's issuer is not the application's configured issuer"),
  badAudience: e(530003, "The ID token's audience is not the application's configured audience"),
  tooOld: e(530004, 'The ID token was issued more than a week ago'),
  usernameFailed: e(530006, 'Could not generate a username for the provisional account; retry'),
  badSecret: e(530007, 'Invalid client secret', 401),
  noOidcConfiguration: e(530008, "The issuer's OpenID configuration could not be found"),
  noJwks: e(530009, "The issuer's JWKS could not be fetched"),
  notProvisional: e(530010, 'The external identity belongs to a full account: use the OAuth2 flow'),
  badJwt: e(530020, 'Invalid OIDC JWT token'),
  /** Merging: the identity names no provisional account (merged already, or a full account's). */
  badMergeSource: e(530014, 'Invalid merge source: the account is not provisional'),
  badMergeDestination: e(530016, 'Invalid merge destination: the account is provisional'),
  mergeSourceBanned: e(530017, 'The provisional account is locked or deleted'),
  tooManyIdentities: e(530023, 'The account already has an external identity for this application'),
  /** The provisional account was locked or deleted by an operator: no token is issued for it. */
  unavailable: () => new ApiError(403, 50001, 'Missing Access'),
  /** DISCORD_BOT_ISSUED_ACCESS_TOKEN that is not a live token of this application's provisional account. */
  badAccessToken: () => new ApiError(401, 50014, 'Invalid authentication token provided'),
}
