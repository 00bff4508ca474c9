// TypeBox schemas of GET /experiments, for /api/docs: the query (checked by hand in routes.ts, since Discord's
// clients send True/False/1/0) and the answer.
import { t } from 'elysia'
import { queryString } from '../http/form'
import { PLATFORMS } from './definitions'

export const ExperimentsQuery = t.Object({
  with_guild_experiments: queryString('true, True, 1, false, False or 0'),
  platform: queryString(`one of ${PLATFORMS.join(', ')}; needs a token`),
})

// The experiment arrays are positional (Discord's wire format, WIRE.md §4): JSON Schema 2020-12 tuples.
const tuple = (items: [name: string, schema: unknown][], required: number, description: string) =>
  t.Unsafe<unknown[]>({
    type: 'array',
    description: `${description}: [${items.map(([name]) => name).join(', ')}]`,
    prefixItems: items.map(([name, schema]) => ({ ...(schema as object), description: name })),
    minItems: required,
    maxItems: items.length,
  })
const INT = { type: 'integer' }
const NULLABLE = (type: string) => ({ type: [type, 'null'] })

const UserExperiment = tuple(
  [
    ['hash (murmur3 of the name)', INT],
    ['revision', INT],
    ['bucket (-1 none)', INT],
    ['override (0 when overridden, else -1)', INT],
    ['population', INT],
    ['hash_result (position 0-9999)', INT],
    ['aa_mode', INT],
    ['trigger_debugging', INT],
    ['holdout_name', { type: 'string' }],
    ['holdout_revision', INT],
    ['holdout_bucket', INT],
  ],
  8,
  'A user experiment; the last three only when a holdout disabled it',
)

const FilterValue = {
  anyOf: [
    { type: 'array', items: { type: ['string', 'integer'] } },
    { type: ['string', 'integer', 'boolean', 'null'] },
  ],
}
const Population = {
  type: 'array',
  description: 'population: [ranges, filters]',
  prefixItems: [
    {
      type: 'array',
      description: 'ranges: [bucket, [{s, e}]] (e exclusive)',
      items: {
        type: 'array',
        prefixItems: [
          INT,
          { type: 'array', items: { type: 'object', properties: { s: INT, e: INT }, required: ['s', 'e'] } },
        ],
        minItems: 2,
        maxItems: 2,
      },
    },
    {
      type: 'array',
      description: 'filters: [key hash, [[field hash, value]]]',
      items: {
        type: 'array',
        prefixItems: [
          INT,
          { type: 'array', items: { type: 'array', prefixItems: [INT, FilterValue], minItems: 2, maxItems: 2 } },
        ],
        minItems: 2,
        maxItems: 2,
      },
    },
  ],
  minItems: 2,
  maxItems: 2,
}

const GuildExperiment = tuple(
  [
    ['hash', INT],
    ['hash_key', NULLABLE('string')],
    ['revision', INT],
    ['populations', { type: 'array', items: Population }],
    [
      'overrides [{b, k}]',
      {
        type: 'array',
        items: {
          type: 'object',
          properties: { b: INT, k: { type: 'array', items: { type: 'string' } } },
          required: ['b', 'k'],
        },
      },
    ],
    ['overrides_formatted', { type: 'array', items: { type: 'array', items: Population } }],
    ['holdout_name', NULLABLE('string')],
    ['holdout_bucket', NULLABLE('integer')],
    ['aa_mode', INT],
    ['trigger_debugging', INT],
  ],
  10,
  'A server experiment',
)

export const ExperimentsAnswer = t.Object(
  {
    fingerprint: t.Optional(
      t.String({ description: 'a new fingerprint, when the request carried neither a token nor one' }),
    ),
    assignments: t.Array(UserExperiment, { description: 'user experiment arrays (WIRE.md §4)' }),
    guild_experiments: t.Optional(
      t.Array(GuildExperiment, { description: 'server experiment arrays, with with_guild_experiments' }),
    ),
  },
  { description: 'Assignments' },
)
