// /lobbies/<lobby id>: a lobby for a logged-in member — members (with who is in the call), the chat as it happens,
// and the call itself (Join voice, Mute, Leave, who is speaking). The lobby and its members (named) are read first
// (GET /lobbies/{id}, which a user session may read for its own lobbies: a stranger or an unknown lobby gets 404 and
// the page says so); then the person's own Gateway connection keeps them current and brings the messages. All of it
// through the game client SDK (client/), as a game's page would: REST, the Gateway, the live lobby and its call.
import { ApiError, Client, localStorageTokenStore, type Lobby, type VoiceState } from '../../../client/src/index'
import { avatarFor } from './lib/remote-auth'
import { $, Cancelled, el, goLogin, pathParameter, show } from './lib/ui'

type User = { id: string; username: string; global_name?: string | null }
type Member = { id: string; connected: boolean; muted: boolean; speaking: boolean }
type LobbyRead = {
  id: string
  members: { id: string; connected?: boolean; user?: User }[]
  voice_states?: { user_id: string; self_mute: boolean; connected: boolean }[]
}

const lobbyId = pathParameter('/lobbies/')
// The page's session token, where every page keeps it (localStorage "token"); sent bare, as a user token.
// The Gateway at this page's own origin, resumes too: the pages' CSP allows no other (connect-src 'self').
const client = new Client({ tokenStore: localStorageTokenStore(), gateway: { followResumeUrl: false } })
const members = new Map<string, Member>()
const names = new Map<string, string>()
const MESSAGES_SHOWN = 200

const joinButton = $<HTMLButtonElement>('#join')
const muteButton = $<HTMLButtonElement>('#mute')
const leaveButton = $<HTMLButtonElement>('#leave')
const callState = $('#call-state')
const notice = $('#lobby-notice')
let me: User
/** The live lobby, once read (its voice is the call). */
let live: Lobby | undefined
/** Set when the lobby is out of reach (not a member, removed, deleted): no more joining. */
let closedFor: string | undefined

const displayName = (user: User) => user.global_name || user.username

function member(id: string): Member {
  let m = members.get(id)
  if (!m) members.set(id, (m = { id, connected: false, muted: false, speaking: false }))
  return m
}

function renderMembers() {
  const list = $('#members')
  const sorted = [...members.values()].sort(
    (a, b) =>
      Number(b.id === me.id) - Number(a.id === me.id) ||
      Number(b.connected) - Number(a.connected) ||
      a.id.localeCompare(b.id),
  )
  list.replaceChildren(
    ...sorted.map((m) => {
      const name = names.get(m.id) ?? `User ${m.id}`
      // A muted member is not speaking, whatever the last audio level said (it lags the mute by up to a hold).
      const speaking = m.speaking && !m.muted
      return el(
        'li',
        {
          'data-user': m.id,
          'data-connected': String(m.connected),
          'data-muted': String(m.muted),
          'data-speaking': String(speaking),
        },
        el(
          'span',
          { class: 'member' },
          el(
            'span',
            { class: `speaker${speaking ? ' on' : ''}`, title: speaking ? 'Speaking' : '' },
            avatarFor({ id: m.id, username: name }),
          ),
          el(
            'span',
            { class: 'what' },
            el('span', { class: 'name' }, name),
            m.id === me.id ? el('small', {}, 'you') : null,
          ),
        ),
        el(
          'span',
          {},
          m.connected ? el('span', { class: 'badge in-call' }, 'in call') : null,
          m.connected && m.muted ? el('span', { class: 'badge muted-badge' }, 'muted') : null,
          speaking ? el('span', { class: 'badge speaking' }, 'speaking') : null,
        ),
      )
    }),
  )
}

function addMessage(message: { id: string; content: string; author?: User; timestamp?: string }) {
  if (message.author) names.set(message.author.id, displayName(message.author))
  const list = $('#messages')
  const time = message.timestamp ? new Date(message.timestamp) : new Date()
  list.append(
    el(
      'li',
      { 'data-message': message.id },
      el('strong', { class: 'author' }, message.author ? displayName(message.author) : 'Unknown'),
      ' ',
      el('time', { datetime: time.toISOString(), class: 'muted' }, time.toLocaleTimeString()),
      el('p', { class: 'content' }, message.content),
    ),
  )
  while (list.children.length > MESSAGES_SHOWN) list.firstElementChild!.remove()
  show($('#no-messages'), false)
  list.lastElementChild!.scrollIntoView({ block: 'nearest' })
}

function setCallState(state: VoiceState, message?: string) {
  callState.dataset.state = state
  const inCall = state === 'joining' || state === 'connected'
  callState.textContent =
    message ?? (state === 'joining' ? 'Joining…' : state === 'connected' ? 'In the call.' : 'Not in the call.')
  show(joinButton, !inCall)
  joinButton.disabled = !!closedFor
  show(muteButton, inCall)
  show(leaveButton, inCall)
  const mine = member(me.id)
  if (state === 'connected' || !inCall) {
    mine.connected = state === 'connected'
    mine.muted = mine.connected && !!live?.voice.muted
    if (!mine.connected) mine.speaking = false
    renderMembers()
  }
}

/** The lobby is out of reach for this person: say why and stop offering the call. */
function lockOut(message: string) {
  closedFor = message
  notice.textContent = message
  joinButton.disabled = true
}

const NOT_A_MEMBER = 'This lobby does not exist, or you are not one of its members.'

/**
 * Read the lobby: its members, named, and who is in the call. false when it is out of reach (unknown, or this
 * person is not a member): the page says so.
 */
async function loadLobby(): Promise<boolean> {
  let lobby: LobbyRead
  try {
    lobby = (await client.rest.get(`/lobbies/${lobbyId}`)) as LobbyRead
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      if (!closedFor) lockOut(NOT_A_MEMBER)
      return false
    }
    throw error
  }
  const ids = new Set(lobby.members.map((m) => m.id))
  for (const id of [...members.keys()]) if (!ids.has(id)) members.delete(id)
  for (const m of lobby.members) {
    if (m.user) names.set(m.id, displayName(m.user))
    const row = member(m.id)
    // This person's own call state is the call's to tell (setCallState).
    if (m.id !== me.id || !live) row.connected = m.connected === true
  }
  for (const state of lobby.voice_states ?? [])
    if (state.user_id !== me.id) member(state.user_id).muted = state.connected && state.self_mute
  renderMembers()
  return true
}

/** A member the page cannot name yet (added since the lobby was read): read it again, once at a time. */
let reading: Promise<unknown> | undefined
function learnNames() {
  reading ??= loadLobby()
    .catch(() => undefined)
    .finally(() => (reading = undefined))
}

function onDispatch(type: string, d: any) {
  const ours =
    d?.lobby_id === lobbyId ||
    ((type === 'LOBBY_CREATE' || type === 'LOBBY_UPDATE' || type === 'LOBBY_DELETE') && d?.id === lobbyId)
  if (!ours) return
  switch (type) {
    // The call itself (offers, its end) is the SDK's (lobby.voice).
    case 'LOBBY_VOICE_SERVER_CLOSE':
      if (d.reason === 'not_member' || d.reason === 'removed' || d.reason === 'lobby_deleted') lockOut(d.message)
      return
    case 'LOBBY_MESSAGE_CREATE':
      return addMessage(d)
    case 'LOBBY_CREATE':
    case 'LOBBY_UPDATE':
      for (const state of d.voice_states ?? [])
        Object.assign(member(state.user_id), { connected: true, muted: !!state.self_mute })
      break
    case 'LOBBY_DELETE':
      lockOut(d.reason === 'removed' ? 'You are no longer a member of this lobby.' : 'This lobby was deleted.')
      break
    case 'LOBBY_MEMBER_ADD':
      if (d.member?.id && !names.has(d.member.id)) learnNames()
      if (d.member?.id) member(d.member.id).connected = d.member.connected === true
      break
    case 'LOBBY_MEMBER_UPDATE':
    case 'LOBBY_MEMBER_CONNECT':
    case 'LOBBY_MEMBER_DISCONNECT':
      if (d.member?.id) member(d.member.id).connected = d.member.connected === true
      break
    case 'LOBBY_MEMBER_REMOVE':
      if (d.member?.id === me.id) lockOut('You are no longer a member of this lobby.')
      if (d.member?.id) members.delete(d.member.id)
      break
    case 'LOBBY_VOICE_STATE_UPDATE': {
      const m = member(d.user_id)
      m.connected = d.connected === true
      m.muted = m.connected && d.self_mute === true
      if (!m.connected) m.speaking = false
      break
    }
    default:
      return
  }
  renderMembers()
}

async function start() {
  if (!client.token) goLogin()
  $('#lobby-id').textContent = lobbyId
  if (!/^\d{1,20}$/.test(lobbyId)) {
    $('#connection').textContent = ''
    return lockOut('This is not a lobby address.')
  }
  try {
    me = await client.rest.get('/users/@me')
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      client.setToken(null)
      goLogin()
    }
    throw error
  }
  names.set(me.id, displayName(me))
  $('#me-name').textContent = displayName(me)

  const connection = $('#connection')
  // Members only: a stranger (or an unknown lobby) is told so and never connects.
  if (!(await loadLobby())) {
    connection.textContent = ''
    $('#lobby').removeAttribute('aria-busy')
    show($('#call'), false)
    show($('#chat'), false)
    show($('#members-section'), false)
    return
  }
  const gateway = client.gateway
  gateway.on('ready', () => {
    connection.textContent = 'Connected.'
    $('#lobby').removeAttribute('aria-busy')
    // A new session: a call of the old one ended with it (the SDK ends it). What changed meanwhile is read again.
    learnNames()
  })
  // The same session (the call with it): what it missed was replayed.
  gateway.on('resumed', () => {
    connection.textContent = 'Connected.'
  })
  gateway.on('dispatch', onDispatch)
  gateway.on('reconnecting', () => {
    connection.textContent = 'Connection lost; reconnecting…'
  })
  gateway.on('closed', () => {
    connection.textContent = 'Your session ended. Log in again.'
  })
  live = await client.lobbies.get(lobbyId)
  const voice = live.voice
  voice.on('state', setCallState)
  voice.on('participants', (users) => {
    for (const id of users) member(id).connected = true
    renderMembers()
  })
  voice.on('speaking', (id, speaking) => {
    member(id).speaking = speaking
    renderMembers()
  })
  // Retried by the SDK until it connects or the token is refused (then `closed` says so).
  gateway.connect().catch(() => undefined)

  joinButton.addEventListener('click', async () => {
    notice.textContent = closedFor ?? ''
    if (closedFor) return
    joinButton.disabled = true
    try {
      if (!gateway.connected) throw new Error('Not connected to the server. Wait a moment and try again.')
      await voice.join({ audioRoot: $('#call-audio') })
    } catch (error) {
      notice.textContent = error instanceof Error ? error.message : String(error)
      setCallState('idle')
    } finally {
      joinButton.disabled = !!closedFor
    }
  })
  muteButton.addEventListener('click', () => {
    voice.setMuted(!voice.muted)
    muteButton.setAttribute('aria-pressed', String(voice.muted))
    muteButton.textContent = voice.muted ? 'Unmute' : 'Mute'
    const mine = member(me.id)
    mine.muted = voice.muted && mine.connected
    renderMembers()
  })
  leaveButton.addEventListener('click', () => voice.leave())
  addEventListener('pagehide', () => voice.leave())
}

start().catch((error) => {
  if (error instanceof Cancelled) return
  notice.textContent = error instanceof Error ? error.message : String(error)
})
