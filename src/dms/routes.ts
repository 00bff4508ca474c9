// DM endpoints (Discord's user resource: POST and GET /users/@me/channels) for users and bots. A DM's messages use the
// channel message routes of guilds/ (GET /channels/{id} too).
import { endpoint } from '../http/endpoint'
import { listDms, openDm } from './dms'
import { CreateDmSchema, DmChannel, DmChannelList } from './schemas'

const auth: ('user' | 'bot')[] = ['user', 'bot']
const tag = 'channels'

export const dmEndpoints = [
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/channels',
      auth,
      tag,
      summary:
        'Open a DM with a user (friends, or a shared guild or lobby; a bot: a shared guild): the same channel each time',
      body: CreateDmSchema,
      answers: { 200: DmChannel },
    },
    async ({ caller, body }) => await openDm(caller.userId, body.recipient_id),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/users/@me/channels',
      auth,
      tag,
      summary: "The caller's DM channels",
      answers: { 200: DmChannelList },
    },
    async ({ caller }) => await listDms(caller.userId),
  ),
]
