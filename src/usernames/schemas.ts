// TypeBox schemas of the username endpoints: the query and body, and the answers documented in /api/docs.
import { t } from 'elysia'

export const SuggestionQuery = t.Object({ global_name: t.Optional(t.String({ maxLength: 32 })) })
export const AttemptSchema = t.Object(
  { username: t.String({ maxLength: 64 }) },
  { examples: [{ username: 'ada_lovelace' }] },
)

export const SuggestionAnswer = t.Object({ username: t.String() }, { description: 'A free, valid username' })
export const AttemptAnswer = t.Object(
  { taken: t.Nullable(t.Boolean({ description: 'null when the username is invalid' })) },
  { description: 'Verdict' },
)
