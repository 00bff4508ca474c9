// The pages' client: the game SDK (lobby-client, bundled from client/src by the HTML import), on this page's origin,
// its token in localStorage as Discord's web client keeps it (a JSON string under "token").
import { ApiError, Client, localStorageTokenStore } from '../../../../client/src/index'

// /api/v9 as Discord's web client calls it (the same routes as v10).
export const client = new Client({ tokenStore: localStorageTokenStore(), apiVersion: 9 })

export {
  ApiError,
  ConnectionError,
  RemoteAuthRequest,
  type LoginStep,
  type MfaMethod,
  type MfaStep,
} from '../../../../client/src/index'

/** The error codes of one field of a 50035 answer (e.g. to recognise ACCOUNT_LOGIN_VERIFICATION_EMAIL). */
export function fieldCodes(error: unknown, field: string): string[] {
  if (!(error instanceof ApiError)) return []
  const node = error.errors?.[field] as { _errors?: { code: string }[] } | undefined
  return (node?._errors ?? []).map((e) => e.code)
}
