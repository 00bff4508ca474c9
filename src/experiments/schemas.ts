// TypeBox schemas of GET /experiments, for /api/docs: the query (checked by hand in routes.ts, since Discord's
// clients send True/False/1/0) and the answer.
import { t } from 'elysia'
import { queryString } from '../http/form'
import { PLATFORMS } from './definitions'

export const ExperimentsQuery = t.Object({
  with_guild_experiments: queryString('true, True, 1, false, False or 0'),
  platform: queryString(`one of ${PLATFORMS.join(', ')}; needs a token`),
})

export const ExperimentsAnswer = t.Object(
  {
    fingerprint: t.Optional(t.String({ description: 'a new fingerprint, when the request carried neither a token nor one' })),
    assignments: t.Array(t.Array(t.Unknown()), { description: 'user experiment arrays (WIRE.md §4)' }),
    guild_experiments: t.Optional(t.Array(t.Array(t.Unknown()), { description: 'server experiment arrays, with with_guild_experiments' })),
  },
  { description: 'Assignments' },
)
