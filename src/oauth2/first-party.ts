// The server's own web client as an application (issue 46): one first-party application, made on first use and
// stored (applications.first_party). Its Bearer token is issued to a logged-in user session without a consent screen
// (the person is using the server's own client), bound to that session (oauth2_tokens.session_id: logging the session
// out deletes it; its Gateway sessions close at the Gateway's next credential check, within 5 s — never moved onto a
// rotated user session as a user session's are), and it reaches every lobby its user is a member of — the lobby
// routes take it like a game's token (spec §4.1 refuses user sessions there).
import type { UserCaller } from '../core/caller'
import { snowflake } from '../core/snowflake'
import { config } from '../config'
import { createApplication } from './applications'
import { issue, type TokenResponse } from './grants'
import { findFirstPartyApplication, trimSessionTokens } from './store'
import type { ApplicationRow } from './tables'

/**
 * What the web client is allowed: who the user is, lobbies (chat, history, the call), and friends (the home page's
 * list, requests and blocks, live through its Gateway session's RELATIONSHIP_* and PRESENCE_UPDATE).
 */
export const FIRST_PARTY_SCOPES = 'identify lobbies.write gateway.connect relationships.read relationships.write'

/** A session keeps this many first-party tokens at most (a tab each; the oldest goes). */
const TOKENS_PER_SESSION = 5

let making: Promise<ApplicationRow> | undefined

/** The first-party application: read, or made now (once per process; a second node that raced reads the first). */
export async function firstPartyApplication(): Promise<ApplicationRow> {
  const found = await findFirstPartyApplication()
  if (found) return found
  making ??= (async () => {
    try {
      await createApplication(config().productName, [], null, true)
      const made = await findFirstPartyApplication()
      if (!made) throw new Error('first-party application not stored')
      return made
    } finally {
      making = undefined
    }
  })()
  return await making
}

/** A Bearer token of the first-party application for this user session (consent implied). */
export async function issueFirstPartyToken(
  caller: UserCaller,
): Promise<TokenResponse & { application: { id: string; name: string } }> {
  const app = await firstPartyApplication()
  const issued = await issue({
    applicationId: app.id,
    userId: caller.userId,
    scopes: FIRST_PARTY_SCOPES,
    familyId: snowflake(),
    refresh: false,
    publicClient: true,
    sessionId: caller.sessionId,
  })
  await trimSessionTokens(caller.sessionId, TOKENS_PER_SESSION)
  return { ...issued, application: { id: app.id, name: app.name } }
}
