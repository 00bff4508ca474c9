// The console's API, under /api/v10/admin/... (and the other prefixes), each route declared like every endpoint (so in
// /api/docs/json). User sessions only; every route checks the operator first (access.ts): 403 for anyone else,
// 403 for an operator without MFA, 60003 without a recent elevation, cross-site writes refused. Actions are
// limited to 5 a second per operator, reads to 20.
import { cachedUser } from '../accounts/store'
import { endpoint } from '../http/endpoint'
import { paging } from '../http/form'
import { mfaEnabled } from '../mfa/factors'
import { requireOperator } from './access'
import { type Actor, listAudit } from './audit'
import { applicationList, createApp } from './applications'
import {
  ApplicationsAnswer,
  AuditAnswer,
  CreateApplicationSchema,
  CreatedApplicationAnswer,
  AuditQuery,
  DeletedAnswer,
  LockAnswer,
  LogoutAnswer,
  LogoutSchema,
  MAX_SEARCH,
  MfaRemovedAnswer,
  OperatorAnswer,
  ReasonSchema,
  ResentAnswer,
  SearchQuery,
  UserPageAnswer,
  UserSearchAnswer,
} from './schemas'
import { ACT, auth, operator, READ, type Req, tag } from './route-kit'
import {
  deleteAccount,
  findUsers,
  lockAccount,
  logoutSessions,
  removeMfa,
  resendUserVerification,
  unlockAccount,
  userPage,
} from './users'

/** A POST on one user: the checks, then the action with the operator and the body. */
const userAction = <Body>(
  action: string,
  summary: string,
  body: Body,
  answer: Parameters<typeof endpoint>[0]['answers'][number],
  run: (actor: Actor, userId: string, body: any) => Promise<unknown>,
) =>
  endpoint(
    {
      method: 'POST',
      path: `/admin/users/:userId/${action}`,
      auth,
      tag,
      summary,
      body: body as never,
      answers: { 200: answer },
      limit: ACT,
    },
    async (r) => run(await operator(r as Req), r.params.userId, r.body),
  )

export const adminEndpoints = [
  endpoint(
    {
      method: 'GET',
      path: '/admin/@me',
      auth,
      tag,
      summary: 'The console’s first question: is this session an operator’s (403 if not), with MFA on',
      answers: { 200: OperatorAnswer },
      limit: READ,
    },
    async ({ caller, request }) => {
      await requireOperator(caller, request)
      const user = await cachedUser(caller.userId)
      return { id: caller.userId, username: user?.username ?? '', mfa_enabled: await mfaEnabled(caller.userId) }
    },
  ),
  endpoint(
    {
      method: 'GET',
      path: '/admin/users',
      auth,
      tag,
      summary: 'Search users by id, or the start of a username, an e-mail or a phone number',
      query: SearchQuery,
      answers: { 200: UserSearchAnswer },
      limit: READ,
    },
    async (r) => {
      await operator(r)
      const { query, limit } = r.query()
      return await findUsers(query ?? '', paging({ limit }, MAX_SEARCH, 25).limit)
    },
  ),
  endpoint(
    {
      method: 'GET',
      path: '/admin/users/:userId',
      auth,
      tag,
      summary: 'A user’s page: profile, factors, sessions, lobbies, guilds, OAuth2 grants',
      answers: { 200: UserPageAnswer },
      limit: READ,
    },
    async (r) => {
      await operator(r)
      return await userPage(r.params.userId)
    },
  ),
  userAction(
    'lock',
    'Lock an account: every session and socket ends, on every node (reason required)',
    ReasonSchema,
    LockAnswer,
    (a, id, b) => lockAccount(a, id, b.reason),
  ),
  userAction('unlock', 'Unlock an account', ReasonSchema, LockAnswer, (a, id, b) => unlockAccount(a, id, b.reason)),
  userAction('logout', 'Log out some of a user’s sessions, or all', LogoutSchema, LogoutAnswer, (a, id, b) =>
    logoutSessions(a, id, b.session_id_hashes, b.reason),
  ),
  userAction(
    'mfa/remove',
    'Remove every second factor (after an out-of-band check; reason required)',
    ReasonSchema,
    MfaRemovedAnswer,
    (a, id, b) => removeMfa(a, id, b.reason),
  ),
  userAction('verification/resend', 'Send the e-mail verification again', ReasonSchema, ResentAnswer, (a, id) =>
    resendUserVerification(a, id),
  ),
  userAction(
    'delete',
    'Delete an account (scheduled, as the owner’s deletion; reason required)',
    ReasonSchema,
    DeletedAnswer,
    (a, id, b) => deleteAccount(a, id, b.reason),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/admin/applications',
      auth,
      tag,
      summary: 'The applications (no secret)',
      answers: { 200: ApplicationsAnswer },
      limit: READ,
    },
    async (r) => {
      await operator(r)
      return await applicationList()
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/admin/applications',
      auth,
      tag,
      summary: 'Create an application and its bot user (the bot token and client secret are shown once)',
      body: CreateApplicationSchema,
      answers: { 200: CreatedApplicationAnswer },
      limit: ACT,
    },
    async (r) => createApp(await operator(r), r.body.name, r.body.redirect_uris ?? [], r.body.reason),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/admin/audit-log',
      auth,
      tag,
      summary: 'The audit log, newest first, filtered by action, target or operator',
      query: AuditQuery,
      answers: { 200: AuditAnswer },
      limit: READ,
    },
    async (r) => {
      await operator(r)
      const q = r.query()
      const before = q.before && /^\d{1,18}$/.test(q.before) ? Number(q.before) : undefined
      return await listAudit({
        action: q.action || undefined,
        targetId: q.target_id || undefined,
        actorId: q.actor_id || undefined,
        before,
        limit: paging({ limit: q.limit }, 200, 50).limit,
      })
    },
  ),
]
