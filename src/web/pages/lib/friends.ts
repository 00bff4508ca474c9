// The home page's friends (issue 46, part 5): friends with their presence (a dot for online, idle, do not disturb or
// offline, and what they are playing), friend requests received (Accept, Decline) and sent (Cancel), adding a friend
// by username (the server's refusals said plainly, at the field), Remove, Block and Unblock. It all goes through the
// first-party token (relationships.read/write) and stays current through its Gateway session: RELATIONSHIP_* and
// PRESENCE_UPDATE, READY's relationships and presences on every new session.
import {
  ApiError,
  type Client,
  type RelationshipEvents,
  type Relationships,
  type Presence,
  type Ready,
  type Relationship,
  RelationshipType,
} from '../../../../client/src/index'
import { fieldError } from './errors'
import { avatarFor } from './people'
import { $, el, show, submitting, value } from './ui'

const STATUS_TEXT: Record<string, string> = {
  online: 'Online',
  idle: 'Idle',
  dnd: 'Do not disturb',
  offline: 'Offline',
}
const ACTIVITY_VERB: Record<number, string> = { 0: 'Playing', 1: 'Streaming', 2: 'Listening to', 3: 'Watching' }

/** Discord's refusals of a friend request, in words a player reads without knowing the codes. */
const REQUEST_ERRORS: Record<number, string> = {
  80004: 'No one has that username. Check the spelling (it is the username, not the display name).',
  80000: 'That person is not taking friend requests from you.',
  80003: 'That is your own username.',
  80007: 'You are already friends.',
}

type Row = Relationship

const nameOf = (r: Row) => r.nickname || r.user.global_name || r.user.username

/** What a friend is doing, as Discord's list says it ("Playing Chess · In a match"), or ''. */
export function activityText(presence: Presence | undefined): string {
  const activity = presence?.activities?.[0]
  if (!activity) return ''
  if (activity.type === 4) return activity.state ?? activity.name
  const verb = ACTIVITY_VERB[activity.type] ?? (activity.type === 5 ? 'Competing in' : 'Playing')
  return [`${verb} ${activity.name}`, activity.details, activity.state].filter(Boolean).join(' · ')
}

export class FriendsView {
  private readonly friends: Relationships
  private readonly rows = new Map<string, Row>()
  private readonly presences = new Map<string, Presence>()
  private readonly status = $('#friend-status')

  constructor(private readonly app: Client) {
    this.friends = app.relationships
    const form = $<HTMLFormElement>('#add-friend')
    form.addEventListener('submit', (event) => {
      event.preventDefault()
      void this.add(form)
    })
  }

  /** The list from REST, then live from the Gateway (already connected by the page, or connected here). */
  async start(): Promise<void> {
    for (const r of await this.friends.list()) this.rows.set(r.id, r)
    const gateway = this.app.gateway
    const on = <K extends keyof RelationshipEvents>(name: K, listener: RelationshipEvents[K]) =>
      gateway.on(name, listener)
    gateway.on('ready', (ready) => this.fromReady(ready))
    on('RELATIONSHIP_ADD', (r) => {
      this.rows.set(r.id, r)
      this.render()
    })
    on('RELATIONSHIP_UPDATE', (r) => {
      const row = this.rows.get(r.id)
      if (row) this.rows.set(r.id, { ...row, type: r.type, nickname: r.nickname })
      this.render()
    })
    on('RELATIONSHIP_REMOVE', (r) => {
      this.rows.delete(r.id)
      this.presences.delete(r.id)
      this.render()
    })
    on('PRESENCE_UPDATE', (p) => {
      this.presences.set(p.user.id, p)
      this.render()
    })
    this.render()
    if (gateway.ready) this.fromReady(gateway.ready)
    else await gateway.connect()
  }

  private fromReady(ready: Ready) {
    const relationships = ready.relationships as Row[] | undefined
    if (relationships) {
      this.rows.clear()
      for (const r of relationships) this.rows.set(r.id, r)
    }
    this.presences.clear()
    for (const p of (ready.presences as Presence[] | undefined) ?? []) this.presences.set(p.user.id, p)
    this.render()
  }

  private async add(form: HTMLFormElement) {
    this.status.textContent = ''
    const username = value(form, 'username').replace(/^@/, '')
    const sent = await submitting(form, async () => {
      if (!username) throw fieldError('username', 'BASE_TYPE_REQUIRED', 'Enter the username of the person to add.')
      try {
        await this.friends.request(username)
      } catch (error) {
        const plain = error instanceof ApiError ? REQUEST_ERRORS[error.code] : undefined
        if (!plain) throw error
        throw fieldError('username', String((error as ApiError).code), plain)
      }
    })
    if (!sent) return
    form.reset()
    this.status.textContent = `Friend request sent to ${username}.`
  }

  /** An action of a row's button: its errors said in the status line (the row's person is named there). */
  private act(label: string, work: () => Promise<void>) {
    return async (event: Event) => {
      const button = event.currentTarget as HTMLButtonElement
      button.disabled = true
      this.status.textContent = ''
      try {
        await work()
        this.status.textContent = label
        // Without a live Gateway session nothing else would tell the page.
        if (!this.app.gateway.connected) {
          this.rows.clear()
          for (const r of await this.friends.list()) this.rows.set(r.id, r)
          this.render()
        }
      } catch (error) {
        this.status.textContent = error instanceof Error ? error.message : String(error)
        button.disabled = false
      }
    }
  }

  private button(text: string, label: string, done: string, work: () => Promise<void>, kind = 'secondary') {
    return el('button', { type: 'button', class: kind, 'aria-label': label, onclick: this.act(done, work) }, text)
  }

  private row(r: Row): HTMLLIElement {
    const name = nameOf(r)
    const presence = this.presences.get(r.id)
    const status = r.type === RelationshipType.FRIEND ? (presence?.status ?? 'offline') : undefined
    const what = el(
      'div',
      { class: 'what' },
      el('span', { class: 'name' }, name),
      name !== r.user.username ? el('small', {}, r.user.username) : null,
    )
    const actions = el('div', { class: 'actions' })
    const id = r.id
    switch (r.type) {
      case RelationshipType.FRIEND: {
        const doing = activityText(presence)
        what.append(el('small', { class: 'presence' }, STATUS_TEXT[status!] ?? status!, doing ? ` · ${doing}` : ''))
        actions.append(
          this.button('Remove', `Remove ${name} from your friends`, `${name} is no longer your friend.`, () =>
            this.friends.remove(id),
          ),
          this.button('Block', `Block ${name}`, `You blocked ${name}.`, () => this.friends.block(id), 'danger'),
        )
        break
      }
      case RelationshipType.INCOMING_REQUEST:
        what.append(el('small', {}, 'Wants to be your friend'))
        actions.append(
          this.button(
            'Accept',
            `Accept ${name}'s friend request`,
            `You and ${name} are friends now.`,
            () => this.friends.addFriend(id),
            'primary',
          ),
          this.button('Decline', `Decline ${name}'s friend request`, `You declined ${name}'s request.`, () =>
            this.friends.remove(id),
          ),
        )
        break
      case RelationshipType.OUTGOING_REQUEST:
        what.append(el('small', {}, 'Friend request sent'))
        actions.append(
          this.button('Cancel', `Cancel your friend request to ${name}`, `Request to ${name} cancelled.`, () =>
            this.friends.remove(id),
          ),
        )
        break
      case RelationshipType.BLOCKED:
        actions.append(
          this.button('Unblock', `Unblock ${name}`, `You unblocked ${name}.`, () => this.friends.remove(id)),
        )
        break
    }
    const face = el('span', { class: 'face' }, avatarFor(r.user))
    if (status) face.append(el('span', { class: 'status-dot', 'data-status': status, 'aria-hidden': 'true' }))
    return el(
      'li',
      { 'data-user': id, 'data-type': String(r.type), ...(status ? { 'data-status': status } : {}) },
      el('div', { class: 'member' }, face, what),
      actions,
    )
  }

  private render() {
    const all = [...this.rows.values()]
    const of = (type: number) => all.filter((r) => r.type === type)
    const online = (r: Row) => (this.presences.get(r.id)?.status ?? 'offline') !== 'offline'
    const friends = of(RelationshipType.FRIEND).sort(
      (a, b) => Number(online(b)) - Number(online(a)) || nameOf(a).localeCompare(nameOf(b)),
    )
    const requests = [...of(RelationshipType.INCOMING_REQUEST), ...of(RelationshipType.OUTGOING_REQUEST)]
    const blocked = of(RelationshipType.BLOCKED)
    $('#friends').replaceChildren(...friends.map((r) => this.row(r)))
    $('#requests').replaceChildren(...requests.map((r) => this.row(r)))
    $('#blocked').replaceChildren(...blocked.map((r) => this.row(r)))
    $('#friends-count').textContent = `${friends.filter(online).length} online of ${friends.length}`
    show($('#no-friends'), friends.length === 0)
    show($('#requests-part'), requests.length > 0)
    show($('#blocked-part'), blocked.length > 0)
  }
}
