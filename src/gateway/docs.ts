// The Gateway's reference at /api/docs/gateway: connecting, opcodes, close codes and every dispatch the server sends,
// with its payload. Opcodes and close codes come from protocol.ts (a test checks every close code is described);
// the dispatch list is kept by hand beside the domains that publish them.
import { Close, IDENTIFY_TIMEOUT_MS, MAX_INBOUND_BYTES, MAX_PENDING_PER_IP, Op } from './protocol'

type Row = [string, string, string]

const CLOSE_TEXT: Record<number, string> = {
  [Close.UnknownError]: 'the server failed handling a frame; reconnect and resume',
  [Close.UnknownOpcode]: 'an opcode the server does not know',
  [Close.DecodeError]: `a frame that is not a JSON object, or over ${MAX_INBOUND_BYTES / 1024} KiB (Bun closes with 1009 above 20 KiB), or a non-JSON encoding asked for`,
  [Close.NotAuthenticated]: `a frame other than Identify, Resume or Heartbeat before Identify, or no Identify/Resume within ${IDENTIFY_TIMEOUT_MS / 1000} s`,
  [Close.AuthenticationFailed]: 'the token does not resolve (or its session ended: logout, password reset, account locked); do not reconnect with it',
  [Close.AlreadyAuthenticated]: 'a second Identify on the socket',
  [Close.InvalidSeq]: 'Resume with a `seq` ahead of the session',
  [Close.RateLimited]: `more than 120 frames a minute (plus the heartbeats the interval asks for), or ${MAX_PENDING_PER_IP} unidentified sockets from one IP`,
  [Close.SessionTimedOut]: 'no heartbeat within 1.5 intervals; resume',
  [Close.InvalidApiVersion]: '`v` is not 9 or 10',
}

/** Close codes and their meaning (tests compare this with protocol.ts). */
export function closeCodes(): [code: number, name: string, text: string][] {
  return Object.entries(Close).map(([name, code]) => [code, name, CLOSE_TEXT[code] ?? ''])
}

const OPS: [op: number, name: string, direction: string, text: string][] = [
  [Op.Dispatch, 'Dispatch', 'server → client', '`t` names the event, `s` is its sequence number, `d` its payload (below)'],
  [Op.Heartbeat, 'Heartbeat', 'client → server', '`d` = the last `s` received (or null), every `heartbeat_interval`'],
  [Op.Identify, 'Identify', 'client → server', '`{token, properties, intents?, compress?}`: a user token, `Bot <token>` or `Bearer <token>` (OAuth2, with `identify` and `gateway.connect`)'],
  [Op.Resume, 'Resume', 'client → server', '`{token, session_id, seq}`: the events since `seq` are replayed, then RESUMED'],
  [Op.Reconnect, 'Reconnect', 'server → client', 'reconnect and resume'],
  [Op.InvalidSession, 'Invalid Session', 'server → client', '`d: false`: the session cannot be resumed; identify again'],
  [Op.Hello, 'Hello', 'server → client', '`{heartbeat_interval}` (`GATEWAY_HEARTBEAT_MS`), first frame on every socket'],
  [Op.HeartbeatAck, 'Heartbeat ACK', 'server → client', 'answer to each Heartbeat'],
  [17, 'Lobby Voice States', 'client → server', '`[{lobby_id, self_mute, self_deaf}]`: the lobby calls of this session (README: Lobby voice calls)'],
  [40, 'QoS Heartbeat', 'client → server', 'counts as a Heartbeat'],
  [100, 'Lobby Voice Answer (ours)', 'client → server', '`{lobby_id, revision, sdp}`'],
  [101, 'Lobby Voice Candidate (ours)', 'client → server', '`{lobby_id, candidate}`'],
  [-1, 'accepted, ignored', 'client → server', 'ops 3, 4, 5, 8, 13, 14, 18, 19, 20, 29, 36, 37, 41, 42, 43: Discord client ops answered by nothing, never closed for'],
]

const EVENTS: Row[] = [
  ['READY', 'the identifying session', '`{v, user, guilds, session_id, session_type ("normal" or "oauth"), resume_gateway_url, auth_session_id_hash (users), scopes (OAuth2), application (bots, OAuth2), experiments, guild_experiments}`'],
  ['RESUMED', 'the resuming session', '`{_trace}`, after the replayed events'],
  ['AUTH_SESSION_CHANGE', "the sessions of a login session that changed (password reset, new token)", '`{auth_session_id_hash}`'],
  ['USER_UPDATE', "the user's sessions", 'the private user object (as `GET /users/@me`)'],
  ['USER_SETTINGS_UPDATE', "the user's sessions", 'the changed settings'],
  ['GUILD_CREATE', 'a member who joined (or created) a server', 'the server with `channels`, `roles`, `members` (the joining member), `member_count`, `joined_at`'],
  ['GUILD_UPDATE', "the server's members", 'the server object'],
  ['GUILD_DELETE', "the server's members; a member who left", '`{id}`'],
  ['GUILD_MEMBER_ADD', "the server's members", 'the member with `guild_id`'],
  ['GUILD_MEMBER_UPDATE', "the server's members", 'the member with `guild_id` (roles changed)'],
  ['GUILD_MEMBER_REMOVE', "the server's members", '`{guild_id, user}`'],
  ['GUILD_ROLE_CREATE', "the server's members", '`{guild_id, role}`'],
  ['GUILD_ROLE_UPDATE', "the server's members", '`{guild_id, role}`'],
  ['GUILD_ROLE_DELETE', "the server's members", '`{guild_id, role_id}`'],
  ['CHANNEL_CREATE', "members who can see the channel", 'the channel object'],
  ['CHANNEL_UPDATE', 'members who can see the channel; a linked lobby\'s members', 'the channel object (with `linked_lobby` when linked)'],
  ['CHANNEL_DELETE', 'members who could see the channel', 'the channel object'],
  ['MESSAGE_CREATE', 'members who can see the channel', 'the message object'],
  ['INVITE_CREATE', "the channel's viewers; a linked lobby's members", 'the invite (`code`, `channel_id`, `guild_id`, `inviter`, `max_age`, `max_uses`, `uses`, `temporary`, `created_at`)'],
  ['INVITE_DELETE', "the channel's viewers", '`{channel_id, guild_id, code}`'],
  ['LOBBY_CREATE', 'lobby members (and the application\'s bot sessions) when it is created; a member added later', 'the lobby (`id`, `application_id`, `metadata`, `members`, `linked_channel`, `flags`, `voice_states`)'],
  ['LOBBY_UPDATE', 'lobby members and the application\'s bots', 'the lobby'],
  ['LOBBY_DELETE', 'lobby members and the application\'s bots; a removed member', '`{id, reason}`: `deleted` (the lobby is gone) or `removed` (the receiving member was removed)'],
  ['LOBBY_MEMBER_ADD', 'lobby members and the application\'s bots', '`{member, lobby_id, application_id}`'],
  ['LOBBY_MEMBER_UPDATE', 'lobby members and the application\'s bots', '`{member, lobby_id, application_id}`'],
  ['LOBBY_MEMBER_REMOVE', 'lobby members and the application\'s bots', '`{member, lobby_id, application_id}`'],
  ['LOBBY_MEMBER_CONNECT', 'lobby members and the application\'s bots', '`{member, lobby_id, application_id}`: the member\'s call connected'],
  ['LOBBY_MEMBER_DISCONNECT', 'lobby members and the application\'s bots', '`{member, lobby_id, application_id}`: the member\'s call ended'],
  ['LOBBY_MESSAGE_CREATE', 'lobby members and the application\'s bots', 'the lobby message (`id`, `lobby_id`, `channel_id`, `author`, `content`, `metadata`, `flags`, `mentions`)'],
  ['LOBBY_VOICE_STATE_UPDATE', 'lobby members and the application\'s bots', 'a voice state with `lobby_id`, `channel_id: null`, `user_id`, `session_id`, `self_mute`, `self_deaf`, `connected`'],
  ['LOBBY_VOICE_SERVER_OFFER', 'the session in the call', '`{lobby_id, revision, sdp, mic_mid, slots, ice_servers}`'],
  ['LOBBY_VOICE_SERVER_CLOSE', 'the session in the call', '`{lobby_id, reason, message}`'],
]

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/** Inline `code` spans of the tables' text. */
function cell(text: string): string {
  return escape(text).replace(/`([^`]+)`/g, '<code>$1</code>')
}

function table(head: string[], rows: (string | number)[][]): string {
  return `<table><thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${cell(String(c))}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`
}

let html: string | undefined

export function gatewayPage(): string {
  html ??= `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Gateway reference</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem}table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .5rem;vertical-align:top;text-align:left}code{background:#f3f3f3;padding:0 .2rem}</style>
</head><body>
<h1>Gateway</h1>
<p><a href="/api/docs">REST API reference</a></p>
<p>Connect a WebSocket to <code>wss://&lt;host&gt;/gateway?v=10&amp;encoding=json</code> (<code>GET /api/v9/gateway</code>
answers the URL; <code>v=9</code> works too). Frames are JSON text: <code>{"op", "d", "s", "t"}</code>. The server sends
Hello; the client sends Identify (or Resume) within ${IDENTIFY_TIMEOUT_MS / 1000} s and a Heartbeat every
<code>heartbeat_interval</code> milliseconds. Events reach a session from the moment of its READY; a dropped session
can be resumed for <code>GATEWAY_RESUME_WINDOW_MS</code> (2 minutes by default) and gets what it missed.</p>
<h2>Opcodes</h2>
${table(['op', 'name', 'direction', 'd'], OPS.map(([op, name, direction, text]) => [op < 0 ? '' : op, name, direction, text]))}
<h2>Close codes</h2>
${table(['code', 'name', 'when'], [...closeCodes(), [1001, 'going away', 'the server shuts down; reconnect and resume']])}
<p>A client that closes with 1000 or 1001 ends its session; any other close leaves it resumable.</p>
<h2>Dispatch events</h2>
<p>Lobby events go to the lobby's members (their user sessions, and their OAuth2 sessions of the lobby's
application) and to the application's bot sessions.</p>
${table(['t', 'sent to', 'd'], EVENTS)}
</body></html>`
  return html
}

/** GET /api/docs/gateway */
export function gatewayDocsPage(): Response {
  return new Response(gatewayPage(), { headers: { 'content-type': 'text/html; charset=utf-8' } })
}
