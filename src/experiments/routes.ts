// GET /experiments (spec §4.11, WIRE.md §4). Unauthenticated calls are allowed: they are answered for the
// fingerprint in X-Fingerprint, or for a new fingerprint when the request carries neither a token nor one.
import { clientIp } from '../http/client-ip'
import { endpoint } from '../http/endpoint'
import { optionalCaller } from '../http/identity'
import { JsonText } from '../http/respond'
import { PLATFORMS, type Platform } from './definitions'
import { authenticationRequired, badBoolean, badPlatform } from './errors'
import { ExperimentsAnswer, ExperimentsQuery } from './schemas'
import { experimentsAnswer } from './service'

const TRUE = new Set(['true', 'True', '1'])
const FALSE = new Set(['false', 'False', '0'])

function booleanQuery(field: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === '') return false
  if (TRUE.has(raw)) return true
  if (FALSE.has(raw)) return false
  throw badBoolean(field)
}

function platformQuery(raw: string | undefined): Platform | undefined {
  if (raw === undefined || raw === '') return undefined
  if (!PLATFORMS.includes(raw as Platform)) throw badPlatform()
  return raw as Platform
}

/** The experiments domain's endpoint (http/endpoint.ts); open to anonymous callers (it reads the Authorization). */
export const experimentsEndpoints = [
  endpoint(
    {
      method: 'GET',
      path: '/experiments',
      auth: null,
      tag: 'experiments',
      summary: 'Experiment assignments for the user or fingerprint, and optionally the server experiments',
      query: ExperimentsQuery,
      answers: { 200: ExperimentsAnswer },
      hot: true,
    },
    async ({ query, request, server }) => {
      const q = query()
      const withGuildExperiments = booleanQuery('with_guild_experiments', q.with_guild_experiments)
      const platform = platformQuery(q.platform)
      const authorization = request.headers.get('authorization')
      const caller = authorization ? await optionalCaller(request) : undefined
      if ((authorization && !caller) || (platform && !caller)) throw authenticationRequired()
      const answer = await experimentsAnswer({
        caller,
        fingerprint: request.headers.get('x-fingerprint')?.trim() || null,
        ip: () => clientIp(request, server),
        withGuildExperiments,
        platform,
      })
      return new JsonText(answer)
    },
  ),
]
