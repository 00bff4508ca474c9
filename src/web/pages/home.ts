// /app: where a person lands after logging in — their lobbies (named from the lobby's metadata `name`, else the
// application's name and the other members), their friends with presence and friend requests (lib/friends.ts), a
// place for game invites (issue 45), and the way to the settings. Everything is read with the web client's
// first-party token (lib/app-client.ts): GET /users/@me/lobbies as a game would read its own, and the relationships,
// live through its Gateway session.
import { connectApp } from './lib/app-client'
import { client as session } from './lib/client'
import { FriendsView } from './lib/friends'
import { siteNav } from './lib/nav'
import { $, Cancelled, el, goLogin, show } from './lib/ui'

type User = { id: string; username: string; global_name?: string | null }
type LobbyRead = {
  id: string
  metadata: Record<string, string> | null
  application?: { id: string; name: string }
  members: { id: string; connected?: boolean; user?: User }[]
  voice_states?: { user_id: string; connected: boolean }[]
}

const displayName = (user: User) => user.global_name || user.username

/** A lobby's name as the lobby page titles it. */
export function lobbyTitle(lobby: LobbyRead, meId: string): string {
  const named = lobby.metadata?.name?.trim()
  if (named) return named
  const others = lobby.members.filter((m) => m.id !== meId).map((m) => (m.user ? displayName(m.user) : 'someone'))
  const who = others.length ? `with ${others.slice(0, 3).join(', ')}${others.length > 3 ? '…' : ''}` : 'just you'
  return `${lobby.application?.name || 'Lobby'} · ${who}`
}

function lobbyRow(lobby: LobbyRead, meId: string): HTMLLIElement {
  const online = lobby.members.filter((m) => m.connected).length
  const inCall = (lobby.voice_states ?? []).filter((v) => v.connected).length
  const facts = [
    `${lobby.members.length} member${lobby.members.length === 1 ? '' : 's'}`,
    `${online} online`,
    ...(inCall ? [`${inCall} in the call`] : []),
  ]
  return el(
    'li',
    { 'data-lobby': lobby.id },
    el('a', { href: `/lobbies/${lobby.id}` }, lobbyTitle(lobby, meId)),
    el('div', { class: 'hint' }, facts.join(' · ')),
  )
}

async function start() {
  if (!session.token) goLogin()
  siteNav('home')
  const { app, me } = await connectApp<User>()
  $('#me-name').textContent = displayName(me)
  const lobbies = (await app.rest.get('/users/@me/lobbies')) as LobbyRead[]
  $('#lobbies').replaceChildren(...lobbies.map((l) => lobbyRow(l, me.id)))
  show($('#no-lobbies'), lobbies.length === 0)
  await new FriendsView(app).start()
  $('#home').removeAttribute('aria-busy')
}

start().catch((error) => {
  if (error instanceof Cancelled) return
  $('#home-notice').textContent = error instanceof Error ? error.message : String(error)
})
