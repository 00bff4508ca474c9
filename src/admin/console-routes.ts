// The console's routes for applications (rotation, event webhooks, deliveries), experiments, live lobbies and the
// dashboard: the same checks as every console route (route-kit.ts: operator, MFA, elevation, same-origin writes).
import { endpoint } from '../http/endpoint'
import { paging } from '../http/form'
import { deliveryLog, pingWebhook, rotateSecret, setWebhookUrl } from './applications'
import { dashboard } from './dashboard'
import { experimentsFile, MAX_SAMPLE, previewExperiment, rolloutHistogram, saveExperiments } from './experiments'
import { applicationLobbies, closeLobby, lobbyPage, removeLobbyMember } from './lobbies'
import { ACT, auth, operator, READ, type Req, tag } from './route-kit'
import {
  ApplicationAnswer,
  BotTokenAnswer,
  ClientSecretAnswer,
  DashboardAnswer,
  DeliveriesAnswer,
  ExperimentsAnswer,
  HistogramAnswer,
  HistogramQuery,
  LobbiesAnswer,
  LobbiesQuery,
  LobbyClosedAnswer,
  LobbyPageAnswer,
  MemberRemovedAnswer,
  PingAnswer,
  PreviewAnswer,
  PreviewQuery,
  ReasonSchema,
  RotateSchema,
  SaveExperimentsSchema,
  SavedExperimentsAnswer,
  WebhookUrlSchema,
} from './schemas'

const req = (r: unknown) => r as Req

export const consoleEndpoints = [
  endpoint(
    {
      method: 'POST',
      path: '/admin/applications/:appId/bot/reset',
      auth,
      tag,
      summary: 'A new bot token, shown once; the old one is refused at once on every node, the bot’s sockets close',
      body: RotateSchema,
      answers: { 200: BotTokenAnswer },
      limit: ACT,
    },
    async (r) => await rotateSecret(await operator(req(r)), r.params.appId, 'bot_token', r.body.confirm, r.body.reason),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/admin/applications/:appId/client-secret/reset',
      auth,
      tag,
      summary: 'A new client secret, shown once; the old one is refused at once',
      body: RotateSchema,
      answers: { 200: ClientSecretAnswer },
      limit: ACT,
    },
    async (r) =>
      await rotateSecret(await operator(req(r)), r.params.appId, 'client_secret', r.body.confirm, r.body.reason),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/admin/applications/:appId/event-webhooks',
      auth,
      tag,
      summary: 'Set the event webhooks URL (PINGed first, taken only on a 2xx) or turn them off (null)',
      body: WebhookUrlSchema,
      answers: { 200: ApplicationAnswer },
      limit: ACT,
    },
    async (r) => await setWebhookUrl(await operator(req(r)), r.params.appId, r.body.url, r.body.reason),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/admin/applications/:appId/event-webhooks/ping',
      auth,
      tag,
      summary: 'PING the event webhooks URL as set now, and answer what it said and how long it took',
      answers: { 200: PingAnswer },
      limit: ACT,
    },
    async (r) => await pingWebhook(await operator(req(r)), r.params.appId),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/admin/applications/:appId/event-deliveries',
      auth,
      tag,
      summary: 'The delivery log: events still to deliver, with their attempts and last error',
      answers: { 200: DeliveriesAnswer },
      limit: READ,
    },
    async (r) => {
      await operator(req(r))
      return await deliveryLog(r.params.appId, 100)
    },
  ),
  endpoint(
    {
      method: 'GET',
      path: '/admin/applications/:appId/lobbies',
      auth,
      tag,
      summary: 'An application’s lobbies, newest first, with member counts and who is in the call',
      query: LobbiesQuery,
      answers: { 200: LobbiesAnswer },
      limit: READ,
    },
    async (r) => {
      await operator(req(r))
      const q = r.query()
      return await applicationLobbies(r.params.appId, {
        before: q.before || undefined,
        limit: paging({ limit: q.limit }, 100, 50).limit,
      })
    },
  ),
  endpoint(
    {
      method: 'GET',
      path: '/admin/lobbies/:lobbyId',
      auth,
      tag,
      summary: 'A lobby: metadata, members (online, in the call), its last messages with their moderation metadata',
      answers: { 200: LobbyPageAnswer },
      limit: READ,
    },
    async (r) => {
      await operator(req(r))
      return await lobbyPage(r.params.lobbyId)
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/admin/lobbies/:lobbyId/close',
      auth,
      tag,
      summary: 'Close a lobby as its application’s bot would: its members get LOBBY_DELETE',
      body: ReasonSchema,
      answers: { 200: LobbyClosedAnswer },
      limit: ACT,
    },
    async (r) => await closeLobby(await operator(req(r)), r.params.lobbyId, r.body.reason),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/admin/lobbies/:lobbyId/members/:userId/remove',
      auth,
      tag,
      summary: 'Remove a member as the application’s bot would: LOBBY_MEMBER_REMOVE to the lobby',
      body: ReasonSchema,
      answers: { 200: MemberRemovedAnswer },
      limit: ACT,
    },
    async (r) => await removeLobbyMember(await operator(req(r)), r.params.lobbyId, r.params.userId, r.body.reason),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/admin/experiments',
      auth,
      tag,
      summary: 'The experiment definitions as loaded (the file `experiments load` takes), with their version',
      answers: { 200: ExperimentsAnswer },
      limit: READ,
    },
    async (r) => {
      await operator(req(r))
      return await experimentsFile()
    },
  ),
  endpoint(
    {
      method: 'PUT',
      path: '/admin/experiments',
      auth,
      tag,
      summary: 'Replace the definitions (checked whole as the CLI checks them; every node uses them within a second)',
      body: SaveExperimentsSchema,
      answers: { 200: SavedExperimentsAnswer },
      limit: ACT,
    },
    async (r) => await saveExperiments(await operator(req(r)), r.body.definitions, r.body.version, r.body.reason),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/admin/experiments/:name/preview',
      auth,
      tag,
      summary: 'The bucket one user id, fingerprint or guild gets, and why (population, position, override, holdout)',
      query: PreviewQuery,
      answers: { 200: PreviewAnswer },
      limit: READ,
    },
    async (r) => {
      await operator(req(r))
      const q = r.query()
      return await previewExperiment(decodeURIComponent(r.params.name), { user: q.user, guild: q.guild })
    },
  ),
  endpoint(
    {
      method: 'GET',
      path: '/admin/experiments/:name/histogram',
      auth,
      tag,
      summary: 'The buckets a sample of random ids falls in: the rollout as it will be',
      query: HistogramQuery,
      answers: { 200: HistogramAnswer },
      limit: READ,
    },
    async (r) => {
      await operator(req(r))
      const sample = paging({ limit: r.query().sample }, MAX_SAMPLE, 2000).limit
      return await rolloutHistogram(decodeURIComponent(r.params.name), sample)
    },
  ),
  endpoint(
    {
      method: 'GET',
      path: '/admin/dashboard',
      auth,
      tag,
      summary: 'The server’s numbers: users, sockets, lobbies, lobby messages a minute over the last hour, the node',
      answers: { 200: DashboardAnswer },
      limit: READ,
    },
    async (r) => {
      await operator(req(r))
      return await dashboard()
    },
  ),
]
