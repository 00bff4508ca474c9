// What POST /oauth2/token needs to merge a provisional account into the account that authorised the code (issue 44,
// Discord's "Merging Provisional Accounts"): `external_auth_type` and `external_auth_token` beside an
// authorization_code. src/provisional/ stands above oauth2/ and fills this port from its module's install().
import { appState } from '../core/app'
import type { DB } from '../db/client'

/** A checked external credential, ready to merge (its writes run in the code's transaction). */
export type PreparedMerge = {
  /** Merge into `userId` inside the code's transaction; throws Discord's error (the code stays spent). */
  run(tx: DB, userId: string): Promise<void>
}

export type MergePort = {
  /** Check the credential before any write (an OIDC token is verified over the network): throws Discord's error. */
  prepare(applicationId: string, type: string, token: string): Promise<PreparedMerge>
}

const newMergePort = () => ({ port: undefined as MergePort | undefined })
declare module '../core/app' {
  interface AppState {
    mergePort: ReturnType<typeof newMergePort>
  }
}
const held = appState('mergePort', newMergePort)

export function setMergePort(next: MergePort | undefined): void {
  held().port = next
}

export function mergePort(): MergePort | undefined {
  return held().port
}
