// TypeBox schemas of the DM endpoints, and the answers documented in /api/docs.
import { t } from 'elysia'
import { DmChannel } from '../guilds/schemas'
import { Snowflake } from '../http/validation'

/** POST /users/@me/channels: the other user of the DM (Discord's `recipient_id`). */
export const CreateDmSchema = t.Object(
  { recipient_id: Snowflake({ description: 'the user to message' }) },
  { examples: [{ recipient_id: '80351110224678912' }] },
)

export const DmChannelList = t.Array(DmChannel, { description: "The caller's DM channels, the latest active first" })
export { DmChannel }
