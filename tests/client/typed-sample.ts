// Compiled, never run: what the generated types promise a game developer (tests/client/gen.test.ts runs tsc over it;
// `bun run typecheck` covers it too). Each @ts-expect-error line must be an error, or the compile fails.
import type { api, Client, LobbyMessage, RouteOf } from '../../client/src/index'

export async function sample(client: Client, id: string): Promise<void> {
  const me = await client.rest.get('/users/@me')
  const name: string = me.username
  // @ts-expect-error: not a field of GET /users/@me's answer
  me.not_a_field
  const lobby: api.Lobby2 = await client.rest.get(`/lobbies/${id}`)
  const joined = await client.rest.put('/lobbies', { body: { secret: 'match-42', member_metadata: { team: 'red' } } })
  const messages: LobbyMessage[] = await client.rest.get(`/lobbies/${id}/messages`, { query: { limit: 5 } })
  const sent = await client.rest.post(`/lobbies/${lobby.id}/messages`, {
    body: { content: 'gg', metadata: { a: 'b' } },
  })
  const content: string = sent.content
  // @ts-expect-error: content is a string
  await client.rest.post(`/lobbies/${id}/messages`, { body: { content: 5 } })
  // @ts-expect-error: no such route
  await client.rest.get('/no/such/route')
  // @ts-expect-error: /users/@me has no DELETE
  await client.rest.delete('/users/@me')
  // @ts-expect-error: a query parameter GET /lobbies/{id}/messages does not take
  await client.rest.get(`/lobbies/${id}/messages`, { query: { limt: 5 } })
  // 204: nothing comes back
  const left: undefined = await client.rest.delete(`/lobbies/${id}/members/@me`)
  console.log(name, joined.id, messages.length, content, left)
  // Gateway dispatches are typed by name; others come as unknown.
  client.gateway.on('LOBBY_MESSAGE_CREATE', (m) => console.log(m.author.id, m.content))
  // @ts-expect-error: not a field of a lobby message
  client.gateway.on('LOBBY_MESSAGE_CREATE', (m) => m.not_a_field)
  client.gateway.on('closed', ({ code, reason }) => console.log(code.toFixed(), reason.trim()))
  const live = await client.lobbies.createOrJoin({ secret: 's', memberMetadata: { team: 'red' } })
  live.on('message', (m) => console.log(m.content))
  // @ts-expect-error: metadata values are strings
  await live.send('x', { metadata: { n: 1 } })
}

// The literal segment wins over the parameter; a template-literal id takes the parameter.
export const own: RouteOf<'delete', '/lobbies/1/members/@me'> = '/lobbies/{lobbyId}/members/@me'
export const other: RouteOf<'delete', `/lobbies/${string}/members/${number}`> = '/lobbies/{lobbyId}/members/{userId}'
export const query: RouteOf<'get', '/lobbies/1/messages?limit=5'> = '/lobbies/{lobbyId}/messages'
