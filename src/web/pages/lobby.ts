// /lobbies/<lobby id>: a lobby for a logged-in member — its name, the members (named, who is online and in the call),
// the chat (the last 50 messages on opening, older ones on scrolling up, a message box) and the call itself (Join
// voice, Mute, Leave, who is speaking). Spec §4.1 keeps user sessions off the lobby routes, so the page acts as the
// server's first-party application (lib/app-client.ts): its Bearer token reads the lobby (a stranger or an unknown
// lobby gets 404 and the page says so, with a way home), its history, posts (the SDK's enforced nonce: a retried
// send posts once), and its Gateway session brings the live lobby and the call. All through the SDK (client/).
import { ApiError, type Client, type Lobby, type VoiceState } from '../../../client/src/index'
import { connectApp } from './lib/app-client'
import { client as session } from './lib/client'
import { renderMarkdown } from './lib/markdown'
import { siteNav } from './lib/nav'
import { avatarFor } from './lib/people'
import { $, Cancelled, el, goLogin, pathParameter, show } from './lib/ui'

type User = { id: string; username: string; global_name?: string | null }
type Member = { id: string; connected: boolean; muted: boolean; speaking: boolean }
type LobbyRead = {
  id: string
  metadata: Record<string, string> | null
  application?: { id: string; name: string }
  members: { id: string; connected?: boolean; user?: User }[]
  voice_states?: { user_id: string; self_mute: boolean; connected: boolean }[]
}
type Message = {
  id: string
  content: string
  author?: User
  timestamp?: string
  moderation_metadata?: Record<string, string>
}

const lobbyId = pathParameter('/lobbies/')
const members = new Map<string, Member>()
const names = new Map<string, string>()
/** The chat keeps this many messages on the page (older ones come back on scrolling up). */
const MESSAGES_SHOWN = 500
const PAGE = 50
const MAX_CONTENT = 4000

const joinButton = $<HTMLButtonElement>('#join')
const muteButton = $<HTMLButtonElement>('#mute')
const leaveButton = $<HTMLButtonElement>('#leave')
const callState = $('#call-state')
const notice = $('#lobby-notice')
const list = $('#messages')
const olderButton = $<HTMLButtonElement>('#older')
const input = $<HTMLTextAreaElement>('#message-input')
const count = $('#message-count')
const sendError = $('#message-error')
let app: Client
let me: User
/** The live lobby, once read (its voice is the call). */
let live: Lobby | undefined
let read: LobbyRead | undefined
/** Set when the lobby is out of reach (not a member, removed, deleted): no more joining or sending. */
let closedFor: string | undefined
/** Whether older messages may exist (the last page was full). */
let moreHistory = false

const displayName = (user: User) => user.global_name || user.username

function member(id: string): Member {
  let m = members.get(id)
  if (!m) members.set(id, (m = { id, connected: false, muted: false, speaking: false }))
  return m
}

/** The lobby's title: its metadata `name`, else its application's name and who is in it. */
function renderTitle() {
  const named = read?.metadata?.name?.trim()
  const others = [...members.keys()].filter((id) => id !== me.id).map((id) => names.get(id) ?? 'someone')
  const who = others.length ? `with ${others.slice(0, 3).join(', ')}${others.length > 3 ? '…' : ''}` : 'just you'
  const title = named || `${read?.application?.name || 'Lobby'} · ${who}`
  $('#lobby-title').textContent = title
  document.title = document.title.replace(/^[^·]*/, `${title} `)
}

function renderMembers() {
  const sorted = [...members.values()].sort(
    (a, b) =>
      Number(b.id === me.id) - Number(a.id === me.id) ||
      Number(b.connected) - Number(a.connected) ||
      (names.get(a.id) ?? '').localeCompare(names.get(b.id) ?? ''),
  )
  $('#members').replaceChildren(
    ...sorted.map((m) => {
      const name = names.get(m.id) ?? 'Someone new'
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
          el('span', { class: 'what' }, el('span', { class: 'name' }, name)),
        ),
        el(
          'span',
          {},
          // A badge, not a second name: a user called "you" is not confused with this person (UX-T4 finding 20).
          m.id === me.id ? el('span', { class: 'badge you', title: 'This is you' }, 'You') : null,
          m.connected ? el('span', { class: 'badge in-call' }, 'in call') : null,
          m.connected && m.muted ? el('span', { class: 'badge muted-badge' }, 'muted') : null,
          speaking ? el('span', { class: 'badge speaking' }, 'speaking') : null,
        ),
      )
    }),
  )
  renderTitle()
}

function messageItem(message: Message): HTMLLIElement {
  if (message.author) names.set(message.author.id, displayName(message.author))
  const time = message.timestamp ? new Date(message.timestamp) : new Date()
  const flagged = message.moderation_metadata && Object.keys(message.moderation_metadata).length > 0
  return el(
    'li',
    { 'data-message': message.id, ...(flagged ? { 'data-flagged': 'true' } : {}) },
    el('strong', { class: 'author' }, message.author ? displayName(message.author) : 'Unknown'),
    ' ',
    el('time', { datetime: time.toISOString(), class: 'muted' }, time.toLocaleString()),
    flagged ? el('span', { class: 'badge flagged', title: 'Flagged by the moderation of this game' }, 'flagged') : null,
    el('p', { class: 'content' }, ...renderMarkdown(message.content)),
  )
}

const shown = (id: string) => list.querySelector(`li[data-message="${CSS.escape(id)}"]`)

/** A message as it happens (or the answer to this page's own send): at the bottom, once. */
function addMessage(message: Message) {
  const known = shown(message.id)
  if (known) return known.replaceWith(messageItem(message))
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40
  list.append(messageItem(message))
  while (list.children.length > MESSAGES_SHOWN) {
    list.firstElementChild!.remove()
    moreHistory = true
  }
  show($('#no-messages'), false)
  show(olderButton, moreHistory)
  if (atBottom) list.scrollTop = list.scrollHeight
}

/** Older messages, above the oldest shown (newest first from the server). */
let loadingOlder: Promise<void> | undefined
function loadOlder(): Promise<void> {
  loadingOlder ??= (async () => {
    if (!live || !moreHistory) return
    const oldest = list.querySelector('li[data-message]')?.getAttribute('data-message') ?? undefined
    const page = (await live.history({ limit: PAGE, ...(oldest ? { before: oldest } : {}) })) as Message[]
    moreHistory = page.length === PAGE
    const height = list.scrollHeight
    list.prepend(
      ...page
        .reverse()
        .filter((m) => !shown(m.id))
        .map(messageItem),
    )
    list.scrollTop += list.scrollHeight - height
    show($('#no-messages'), list.children.length === 0)
    show(olderButton, moreHistory)
  })().finally(() => (loadingOlder = undefined))
  return loadingOlder
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

/** The lobby is out of reach for this person: say why, stop offering the call and the box, and offer a way home. */
function lockOut(message: string) {
  closedFor = message
  notice.textContent = message
  joinButton.disabled = true
  $<HTMLButtonElement>('#send').disabled = true
  input.disabled = true
  show($('#lobby-gone'))
}

const NOT_A_MEMBER =
  'This lobby does not exist (it may have closed after being idle), or you are not one of its members.'

/**
 * Read the lobby: its name, its members (named), and who is in the call. false when it is out of reach (unknown, or
 * this person is not a member): the page says so.
 */
async function loadLobby(): Promise<boolean> {
  let lobby: LobbyRead
  try {
    lobby = (await app.rest.get(`/lobbies/${lobbyId}`)) as LobbyRead
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      if (!closedFor) lockOut(NOT_A_MEMBER)
      return false
    }
    throw error
  }
  read = lobby
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
    case 'LOBBY_MESSAGE_UPDATE':
      if (shown(d.id)) addMessage(d)
      return
    case 'LOBBY_CREATE':
    case 'LOBBY_UPDATE':
      if (read && d.metadata !== undefined) read.metadata = d.metadata
      for (const state of d.voice_states ?? [])
        Object.assign(member(state.user_id), { connected: true, muted: !!state.self_mute })
      break
    case 'LOBBY_DELETE':
      lockOut(d.reason === 'removed' ? 'You are no longer a member of this lobby.' : 'This lobby was closed.')
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

// ---- the message box

function renderCount() {
  const n = input.value.length
  count.textContent = `${n} / ${MAX_CONTENT}`
  count.dataset.over = String(n > MAX_CONTENT)
}

/**
 * Send what is in the box. A send that failed stays in the chat with "Try again", which sends it with the same nonce:
 * the server posts one message however often it arrives (enforce_nonce).
 */
async function send(content: string, nonce: string, failed?: HTMLLIElement) {
  sendError.textContent = ''
  try {
    const message = (await live!.send(content, { nonce })) as unknown as Message
    failed?.remove()
    addMessage(message)
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    const retry = el('button', { type: 'button', class: 'secondary' }, 'Try again')
    const item = el(
      'li',
      { class: 'failed', 'data-failed': 'true' },
      el('strong', { class: 'author' }, displayName(me)),
      ' ',
      el('span', { class: 'muted' }, `Not sent: ${why}`),
      el('p', { class: 'content' }, ...renderMarkdown(content)),
      retry,
    )
    retry.addEventListener('click', () => send(content, nonce, item))
    if (failed) failed.replaceWith(item)
    else list.append(item)
    sendError.textContent = `Your message was not sent: ${why}`
  }
}

function submit() {
  const content = input.value
  if (closedFor || !live) return
  if (!content.trim()) return
  if (content.length > MAX_CONTENT) {
    sendError.textContent = `A message is at most ${MAX_CONTENT} characters; this one has ${content.length}.`
    return
  }
  input.value = ''
  renderCount()
  void send(content, makeNonce())
}

/** A nonce of at most 25 characters (the server's limit), the same for every try of one message. */
function makeNonce(): string {
  return `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 12)}`
}

$<HTMLFormElement>('#message-form').addEventListener('submit', (event) => {
  event.preventDefault()
  submit()
})
input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault()
    submit()
  }
})
input.addEventListener('input', renderCount)
olderButton.addEventListener('click', () => void loadOlder())
list.addEventListener('scroll', () => {
  if (list.scrollTop < 40 && moreHistory) void loadOlder()
})

// ---- the page

async function start() {
  if (!session.token) goLogin()
  siteNav('lobby')
  if (!/^\d{1,20}$/.test(lobbyId)) {
    $('#connection').textContent = ''
    show($('#call'), false)
    show($('#chat'), false)
    show($('#members-section'), false)
    return lockOut('This is not a lobby address.')
  }
  ;({ app, me } = await connectApp<User>())

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
  const gateway = app.gateway
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
  live = await app.lobbies.get(lobbyId)
  // The last messages (newest first from the server), before the Gateway brings new ones.
  const recent = (await live.history({ limit: PAGE })) as Message[]
  moreHistory = recent.length === PAGE
  for (const message of recent.reverse()) addMessage(message)
  show($('#no-messages'), list.children.length === 0)
  show(olderButton, moreHistory)
  list.scrollTop = list.scrollHeight

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
