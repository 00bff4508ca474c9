// The Gateway's reference at /api/docs/gateway: connecting, opcodes, close codes, every dispatch the server sends with
// its payload, the lobby call's close reasons, and the remote-auth (QR login) WebSocket. Opcodes and the Gateway's
// close codes come from protocol.ts; what the domains above this floor add (voice opcodes and dispatches, remote-auth
// frames and close codes, every published event) is written here by hand, and tests/core/docs-gateway.test.ts reads the
// source to check that nothing the server sends is missing from the page and nothing on it is invented.
import {
  ACCEPTED_NOOP_OPS,
  Close,
  IDENTIFY_TIMEOUT_MS,
  MAX_INBOUND_BYTES,
  MAX_PENDING_PER_IP,
  Op,
  QOS_HEARTBEAT,
  WS_MAX_FRAME_BYTES,
} from './protocol'

type Row = (string | number)[]

const CLOSE_TEXT: Record<number, string> = {
  [Close.UnknownError]: 'the server failed handling a frame; reconnect and resume',
  [Close.UnknownOpcode]: 'an opcode the server does not know (see the opcodes above)',
  [Close.DecodeError]: `a frame that is not a JSON object with a numeric \`op\`, or over ${MAX_INBOUND_BYTES / 1024} KiB of JSON, or an \`encoding\` other than json`,
  [Close.NotAuthenticated]: `a frame other than Identify, Resume or Heartbeat before Identify, or no Identify/Resume within ${IDENTIFY_TIMEOUT_MS / 1000} s`,
  [Close.AuthenticationFailed]:
    'Identify with a token that does not resolve (an OAuth2 token without `identify` and `gateway.connect`), or the session ended: logout, password reset, account locked, disabled or deleted; do not reconnect with it',
  [Close.AlreadyAuthenticated]: 'a second Identify (or Resume) on the socket',
  [Close.InvalidSeq]:
    'not sent: a Resume with a bad `seq` (or an unknown or expired session) is answered with op 9 Invalid Session, `d: false`',
  [Close.RateLimited]: `more than 120 frames a minute (plus the heartbeats the interval asks for), or more than ${MAX_PENDING_PER_IP} unidentified sockets from one IP`,
  [Close.SessionTimedOut]:
    'no heartbeat within 1.5 intervals, or the session was resumed on another socket; resume (or identify again)',
  [Close.InvalidShard]:
    'Identify with a `shard` that is not `[shard_id, num_shards]`, integers with 0 ≤ shard_id < num_shards',
  [Close.InvalidApiVersion]: '`v` is not 9 or 10',
}

/** Discord's Gateway close codes this server never sends, and why. */
const NEVER_SENT: Row[] = [
  [4006, 'Invalid Session (retired)', 'not sent'],
  [4011, 'Sharding Required', 'not sent'],
  [
    4013,
    'Invalid Intents',
    'not sent: `intents` are accepted; a bot session gets DM events only with DIRECT_MESSAGES (1 << 12), and every other event of its topics whatever it asked',
  ],
  [4014, 'Disallowed Intents', 'not sent'],
]

/** Close codes the protocol defines, with their meaning (a test compares them with protocol.ts). */
export function closeCodes(): [code: number, name: string, text: string][] {
  return Object.entries(Close).map(([name, code]) => [code, name, CLOSE_TEXT[code] ?? ''])
}

const OPS: Row[] = [
  [
    Op.Dispatch,
    'Dispatch',
    'server → client',
    '`t` names the event, `s` is its sequence number, `d` its payload (below)',
  ],
  [
    Op.Heartbeat,
    'Heartbeat',
    'client → server',
    '`d` = the last `s` received (or null), every `heartbeat_interval` ms; answered with op 11',
  ],
  [
    Op.Identify,
    'Identify',
    'client → server',
    '`{token, properties, intents?, compress?, shard?, presence?}`: a user token, a bot token (bare or `Bot <token>`) or an OAuth2 access token (bare or `Bearer <token>`, with `identify` and `gateway.connect`); answered with READY; `presence` (as op 3 gives it) is the first status others see',
  ],
  [
    Op.Resume,
    'Resume',
    'client → server',
    "`{token, session_id, seq}`: the events since `seq` are replayed, then RESUMED; op 9 when it cannot resume, or when `token` is not the session's own credential (the same auth session for a user token, the same application for a bot, the same grant with all its scopes for OAuth2, refreshed or not)",
  ],
  [
    Op.RequestGuildMembers,
    'Request Guild Members',
    'client → server',
    '`{guild_id, user_ids?, query?, limit?, presences?, nonce?}`: answered with GUILD_MEMBERS_CHUNK dispatches (1000 members each, `chunk_index`, `chunk_count`, `not_found`, the `nonce`): by up to 100 user ids, or the members whose username or nickname starts with `query` (at most `limit`, 100; `""` with limit 0: all); `presences` is an empty list; a request that is none of these, or names a guild the caller is not in, is passed over',
  ],
  [Op.Reconnect, 'Reconnect', 'server → client', 'reconnect and resume (the session stays resumable)'],
  [
    Op.InvalidSession,
    'Invalid Session',
    'server → client',
    '`d: false`: the session cannot be resumed; identify again',
  ],
  [
    Op.Hello,
    'Hello',
    'server → client',
    '`{heartbeat_interval, _trace}` (`GATEWAY_HEARTBEAT_MS`), the first frame on every socket',
  ],
  [Op.HeartbeatAck, 'Heartbeat ACK', 'server → client', 'the answer to each Heartbeat'],
  [
    Op.PresenceUpdate,
    'Presence Update',
    'client → server',
    "`{status, activities, since?, afk?}`: `status` online, idle, dnd or invisible; `activities` (up to 5) with `name`, `type`, `state`, `details`, `timestamps`, `party {id, size}`, `assets`, `secrets` (kept for the user alone; a game's OAuth2 session sets its own `application_id`): PRESENCE_UPDATE to the user's friends, game friends and lobby-mates; 5 per 20 s per session, more are dropped; a bot's is ignored",
  ],
  [
    17,
    'Lobby Voice States',
    'client → server',
    '`[{lobby_id, self_mute, self_deaf}]` (up to 25): the lobby calls of this session are exactly these (join, change flags, leave the others; `[]` leaves all)',
  ],
  [QOS_HEARTBEAT, 'QoS Heartbeat', 'client → server', 'counts as a Heartbeat'],
  [
    100,
    'Lobby Voice Answer (ours)',
    'client → server',
    '`{lobby_id, revision, sdp}`: the SDP answer (a string, or `{type: "answer", sdp}`; at most 15 KiB) to LOBBY_VOICE_SERVER_OFFER of that revision',
  ],
  [
    101,
    'Lobby Voice Candidate (ours)',
    'client → server',
    '`{lobby_id, candidate: {candidate, sdpMid?, sdpMLineIndex?, usernameFragment?} | null}`: trickle ICE (up to 20; null ends them)',
  ],
  [
    '',
    'accepted, ignored',
    'client → server',
    `ops ${[...ACCEPTED_NOOP_OPS].sort((a, b) => a - b).join(', ')}: Discord client ops (presence, voice state, guild members, subscriptions, streams, soundboard, …) this server has nothing to do for; never closed for`,
  ],
]

const USER = '`{id, username, global_name, discriminator, avatar, bot, public_flags}`'
const LOBBY =
  'the lobby: `{id, application_id, metadata, members: [{id, metadata, flags, connected}], flags, linked_channel?, voice_states}` (`linked_channel` as the channel object; `voice_states` of the members in the call, as LOBBY_VOICE_STATE_UPDATE)'
const LOBBY_MEMBER_EVENT = '`{member: {id, metadata, flags, connected}, lobby_id, application_id}`'
/** A channel's events: its viewers, or a DM's two recipients (guilds/dm-channels.ts announce). */
const VIEWERS =
  "members who can view the channel; in a DM, its two recipients (a bot's sessions only with the DIRECT_MESSAGES intent), the event without `guild_id`"
const TO_LOBBY = "the lobby's members and the application's bot sessions"
const TO_RELATIONSHIPS = 'the user sessions and OAuth2 sessions with `relationships.read`'
const TO_GAME = "the user sessions and the game's OAuth2 sessions with `relationships.read`"
const CHANNEL =
  'the channel (as `GET /channels/{id}`): `{id, type, guild_id, name, position, permission_overwrites, parent_id, nsfw, flags}` with `topic, last_message_id, rate_limit_per_user` (text) or `bitrate, user_limit, rtc_region` (voice)'

const EVENTS: Row[] = [
  [
    'READY',
    'the identifying session',
    `\`{v, user, guilds, private_channels, session_id, session_type, resume_gateway_url, auth_session_id_hash?, auth?, scopes?, application?, shard?, experiments, guild_experiments}\`: \`user\` as \`GET /users/@me\` answers this credential (without \`authenticator_types\`); \`private_channels\` always empty (no direct messages here); \`guilds\` as GUILD_CREATE, except for a bot: \`{id, unavailable: true}\` each, and a GUILD_CREATE for each follows READY (as Discord does for bots); \`session_type\` "normal" or "oauth"; \`auth_session_id_hash\` and \`auth: {authenticator_types}\` (the second factors on: 1 WebAuthn, 2 TOTP, 3 SMS) for user tokens; \`scopes\` for OAuth2; \`application: {id, flags}\` for bots and OAuth2; \`shard\` as Identify sent it (there is one shard: \`GET /gateway/bot\` says \`shards: 1\`, and every shard gets every event); the experiment arrays as \`GET /experiments\``,
  ],
  ['RESUMED', 'the resuming session', '`{_trace}`, after the replayed events'],
  [
    'AUTH_SESSION_CHANGE',
    'the sessions of a login session that changed (password reset, new token)',
    '`{auth_session_id_hash}`: the hash of the session that now carries them',
  ],
  [
    'USER_UPDATE',
    "the user's sessions",
    'the user as `GET /users/@me` answers a user token (e-mail, phone, mfa_enabled, …)',
  ],
  ['USER_SETTINGS_UPDATE', "the user's sessions", '`{locale, theme}`'],
  [
    'GUILD_CREATE',
    "a member who joined (or created) a guild; a bot session, right after READY, for each of the bot's guilds",
    'the guild (as `GET /guilds/{id}`, with `roles`) plus `channels` (channel objects), `members` (the receiving member alone, as `GET /guilds/{id}/members` lists it), `joined_at` (of the receiving member), `large: false`, `unavailable: false`, and empty `voice_states`, `presences`, `threads`, `stage_instances`, `guild_scheduled_events`, `soundboard_sounds`',
  ],
  ['GUILD_UPDATE', "the guild's members", 'the guild (as `GET /guilds/{id}`)'],
  ['GUILD_DELETE', "the guild's members; a member who left or was kicked", '`{id}`'],
  [
    'GUILD_MEMBER_ADD',
    "the guild's members",
    'the member (as `GET /guilds/{id}/members`: `{user, nick, avatar, roles, joined_at, premium_since, deaf, mute, flags, pending, communication_disabled_until}`) with `guild_id`',
  ],
  ['GUILD_MEMBER_UPDATE', "the guild's members", 'the member with `guild_id` (its roles, nickname or timeout changed)'],
  [
    'GUILD_MEMBERS_CHUNK',
    'the session that sent op 8',
    '`{guild_id, members, chunk_index, chunk_count, not_found?, presences?, nonce?}`: up to 1000 members (as `GET /guilds/{id}/members` lists them) per chunk',
  ],
  [
    'GUILD_MEMBER_REMOVE',
    "the guild's members",
    '`{guild_id, user: {id, username, global_name, discriminator, avatar}}`',
  ],
  [
    'GUILD_BAN_ADD',
    "the guild's members",
    '`{guild_id, user}`: the user banned (after its GUILD_MEMBER_REMOVE when it was a member)',
  ],
  ['GUILD_BAN_REMOVE', "the guild's members", '`{guild_id, user}`: the user whose ban was lifted'],
  ['GUILD_ROLE_CREATE', "the guild's members", '`{guild_id, role}` (the role as `GET /guilds/{id}/roles`)'],
  ['GUILD_ROLE_UPDATE', "the guild's members", '`{guild_id, role}`'],
  ['GUILD_ROLE_DELETE', "the guild's members", '`{guild_id, role_id}`'],
  ['CHANNEL_CREATE', VIEWERS, CHANNEL],
  [
    'CHANNEL_UPDATE',
    `members who can view the channel; ${TO_LOBBY} of a lobby it is linked to or unlinked from`,
    `${CHANNEL}; from a lobby link or unlink, with \`linked_lobby: {lobby_id, application_id, linked_by, linked_at}\` (null once unlinked)`,
  ],
  ['CHANNEL_DELETE', 'members who could view the channel', 'the channel as it was'],
  [
    'MESSAGE_CREATE',
    VIEWERS,
    `the message (as \`GET /channels/{id}/messages\`): \`{id, type, content, channel_id, guild_id, author: ${USER.slice(1, -1)}, attachments, embeds, mentions, mention_roles, mention_everyone, pinned, tts, timestamp, edited_timestamp, flags, components, nonce?, message_reference?, referenced_message?, member?}\`: a reply is type 19, with the message it replies to (null once deleted); \`member\` is the author's (as \`GET /guilds/{id}/members\` lists it, without \`user\`) while the author is in the guild`,
  ],
  [
    'MESSAGE_UPDATE',
    VIEWERS,
    "the message as `MESSAGE_CREATE` gives it (with the author's `member`, without `reactions`), after an edit (`edited_timestamp`) or a pin or unpin (`pinned`); a lobby message's copy in the lobby's linked channel, with the `moderation_metadata` the application set on the lobby message",
  ],
  ['MESSAGE_DELETE', VIEWERS, '`{id, channel_id, guild_id}`'],
  ['MESSAGE_DELETE_BULK', VIEWERS, '`{ids, channel_id, guild_id}`: the messages deleted'],
  [
    'TYPING_START',
    VIEWERS,
    '`{channel_id, guild_id, user_id, timestamp, member}`: `timestamp` in seconds, `member` with its `user`',
  ],
  ['CHANNEL_PINS_UPDATE', VIEWERS, '`{guild_id, channel_id, last_pin_timestamp}`: the latest pin still there, or null'],
  [
    'MESSAGE_REACTION_ADD',
    VIEWERS,
    '`{user_id, channel_id, message_id, guild_id, member, emoji: {id: null, name}, message_author_id, burst: false, burst_colors: [], type: 0}`',
  ],
  [
    'MESSAGE_REACTION_REMOVE',
    VIEWERS,
    '`{user_id, channel_id, message_id, guild_id, emoji: {id: null, name}, burst: false, type: 0}`',
  ],
  ['MESSAGE_REACTION_REMOVE_ALL', VIEWERS, '`{channel_id, message_id, guild_id}`'],
  ['MESSAGE_REACTION_REMOVE_EMOJI', VIEWERS, '`{channel_id, message_id, guild_id, emoji: {id: null, name}}`'],
  [
    'INVITE_CREATE',
    `members who can view the channel; ${TO_LOBBY} for an invite to the lobby's linked channel`,
    'guild invites: `{channel_id, guild_id, code, created_at, inviter, max_age, max_uses, temporary, uses, target_type?, target_user?}`; lobby invites: the whole invite as `POST /channels/{id}/invites` answers it, `target_user` the member it is for',
  ],
  ['INVITE_DELETE', VIEWERS, '`{channel_id, guild_id, code}`'],
  ['LOBBY_CREATE', `${TO_LOBBY} when it is created; a member added later (only to that member)`, LOBBY],
  ['LOBBY_UPDATE', TO_LOBBY, LOBBY],
  [
    'LOBBY_DELETE',
    `${TO_LOBBY}; a removed member (only to that member)`,
    '`{id, reason}`: `deleted` (the lobby is gone: deleted or idle) or `removed` (the receiving member was removed)',
  ],
  ['LOBBY_MEMBER_ADD', TO_LOBBY, LOBBY_MEMBER_EVENT],
  ['LOBBY_MEMBER_UPDATE', TO_LOBBY, LOBBY_MEMBER_EVENT],
  ['LOBBY_MEMBER_REMOVE', TO_LOBBY, LOBBY_MEMBER_EVENT],
  ['LOBBY_MEMBER_CONNECT', TO_LOBBY, `${LOBBY_MEMBER_EVENT}: the member's call is up (ICE and DTLS done)`],
  ['LOBBY_MEMBER_DISCONNECT', TO_LOBBY, `${LOBBY_MEMBER_EVENT}: the member's call ended`],
  [
    'LOBBY_MESSAGE_CREATE',
    TO_LOBBY,
    `the lobby message (as \`GET /lobbies/{id}/messages\`): \`{id, type, content, lobby_id, channel_id (the lobby id), author: ${USER.slice(1, -1)}, metadata?, moderation_metadata?, flags, tts, application_id, timestamp, edited_timestamp?, nonce?, mentions: []}\``,
  ],
  [
    'LOBBY_MESSAGE_UPDATE',
    TO_LOBBY,
    'the lobby message as `LOBBY_MESSAGE_CREATE` gives it, with `moderation_metadata` and `edited_timestamp` (the application set its moderation metadata), `tts: false`',
  ],
  [
    'LOBBY_VOICE_STATE_UPDATE',
    TO_LOBBY,
    '`{lobby_id, channel_id: null, user_id, session_id, deaf, mute, self_deaf, self_mute, self_video, suppress, request_to_speak_timestamp, connected}`: a call started (`connected: true`), changed flags, or ended (`connected: false`, `session_id` the session that was in it)',
  ],
  [
    'RELATIONSHIP_ADD',
    TO_RELATIONSHIPS,
    `a relationship (as \`GET /users/@me/relationships\` lists it: \`{id, type, user: ${USER.slice(1, -1)}, nickname, since, is_spam_request, user_ignored}\`) new or of a new type, with \`should_notify\` (true for an incoming request): type 1 friend, 2 blocked, 3 incoming request, 4 outgoing request`,
  ],
  ['RELATIONSHIP_UPDATE', TO_RELATIONSHIPS, "`{id, type, nickname, since}`: a friend's nickname changed"],
  [
    'RELATIONSHIP_REMOVE',
    TO_RELATIONSHIPS,
    '`{id, type, nickname, since}`: the relationship as it was, now gone (removed, declined, cancelled, unblocked, or ended by a block)',
  ],
  [
    'PRESENCE_UPDATE',
    `${TO_RELATIONSHIPS} of the user's friends; ${TO_GAME} of its game friends; the members of its lobbies (not those with a block either way); after a change of the user's display name, its friends and lobby-mates too`,
    "`{user: {id}, status, activities, client_status}`: a friend's, game friend's or lobby-mate's status (online, idle, dnd; offline when invisible or when its last session ended) and activities, without their `secrets`; after `PATCH /users/@me` changed the user's `global_name`, `user` is the whole public user (USER_UPDATE is the user's own, as Discord's)",
  ],
  [
    'GAME_RELATIONSHIP_ADD',
    TO_GAME,
    `a game relationship (as \`GET /users/@me/game-relationships\` lists it: \`{id, application_id, type, user: ${USER.slice(1, -1)}, since, dm_access_type, user_id}\`) new or of a new type, with \`should_notify\`: type 1 friend, 3 incoming request, 4 outgoing request`,
  ],
  [
    'GAME_RELATIONSHIP_REMOVE',
    TO_GAME,
    '`{id, application_id, type, since, user_id}`: the game relationship as it was, now gone (removed, declined, cancelled, or ended by a block)',
  ],
  [
    'GAME_INVITE_CREATE',
    `${TO_GAME} of the inviter and the recipient`,
    "`{invite_id, type, application_id, application_name, inviter_id, recipient_id, created_at, ttl, content, activity}`: type 1 an invite to the inviter's activity (its `secrets.join` in the recipient's copy only), 5 a request to join the recipient's (`activity: null`)",
  ],
  [
    'GAME_INVITE_DELETE',
    `${TO_GAME} of the inviter and the recipient`,
    '`{invite_id, application_id}`: taken back, declined, replaced, answered (a join request) or ended by a block',
  ],
  [
    'LOBBY_VOICE_SERVER_OFFER',
    'the session in the call',
    '`{lobby_id, revision, sdp, mic_mid, slots: [{mid, user_id}], ice_servers}`: an SDP offer; answer it with op 100',
  ],
  [
    'LOBBY_VOICE_SERVER_CLOSE',
    'the session in the call',
    "`{lobby_id, reason, message}`: the server ended or refused the session's call (reasons below)",
  ],
]

/** LOBBY_VOICE_SERVER_CLOSE reasons (voice/protocol.ts closeReasons; a test compares them). */
const VOICE_CLOSE_REASONS: Row[] = [
  ['left', 'the session left the call (op 17 without the lobby)'],
  ['not_member', 'the user is not a member of the lobby'],
  ['call_full', 'the call has `VOICE_MAX_CALL_SIZE` members'],
  ['too_many_calls', 'the session is in too many calls'],
  ['replaced', 'the user joined the call from another session'],
  ['removed', 'the user was removed from the lobby'],
  ['lobby_deleted', 'the lobby was deleted'],
  ['idle', 'no media flowed for the lobby idle timeout'],
  ['timeout', 'the peer connection was not established in time'],
  ['failed', 'the peer connection failed'],
  ['negotiation_failed', 'the SDP answer could not be applied'],
  ['unavailable', 'the server could not open a peer connection (no free UDP port)'],
  ['server_stopping', 'several nodes: the node holding the call is stopping; op 17 again joins it on another node'],
]

/** The remote-auth gateway v2 (remote-auth/desktop.ts): flat `{op, ...}` frames. */
const REMOTE_AUTH_FRAMES: Row[] = [
  ['server', 'hello', '`{heartbeat_interval, timeout_ms}` (`REMOTE_AUTH_HEARTBEAT_MS`, `REMOTE_AUTH_TIMEOUT_MS`)'],
  ['client', 'init', '`{encoded_public_key}`: standard base64 of the SPKI DER of an RSA-2048 key (e = 65537)'],
  ['server', 'nonce_proof', "`{encrypted_nonce}`: 32 random bytes, RSA-OAEP (SHA-256) to the client's key, base64"],
  [
    'client',
    'nonce_proof',
    '`{nonce}`: the decrypted nonce, unpadded base64url; or `{proof}`: unpadded base64url SHA-256 of it',
  ],
  [
    'server',
    'pending_remote_init',
    '`{fingerprint}`: unpadded base64url SHA-256 of the SPKI; the QR code shows `WEB_URL/ra/<fingerprint>`',
  ],
  ['client', 'heartbeat', 'every `heartbeat_interval`'],
  ['server', 'heartbeat_ack', 'the answer to each heartbeat'],
  [
    'server',
    'pending_ticket',
    '`{encrypted_user_payload}`: `id:discriminator:avatar:username` encrypted to the key (the phone claimed the code)',
  ],
  ['server', 'pending_login', '`{ticket}`: exchange it at `POST /users/@me/remote-auth/login`; then close 1000'],
  ['server', 'cancel', 'the phone declined; then close 1000'],
]

const REMOTE_AUTH_CLOSE: Row[] = [
  [1000, 'after `pending_login` or `cancel`'],
  [1001, 'the server shuts down'],
  [1008, "more frames than a client needs (16 + 2 per heartbeat interval of the socket's life)"],
  [1013, 'too many sockets: `REMOTE_AUTH_SOCKETS_PER_IP` from this IP, or 10,000 in all'],
  [4000, '`v` is not 2'],
  [
    4001,
    'a frame that is not a JSON object with a string `op`, an unknown `op`, a binary frame, or a frame over 4096 bytes',
  ],
  [
    4002,
    'handshake failure: a key that is not RSA-2048 SPKI, a wrong nonce or proof, a proof before `init` or twice, a second `init`, a fingerprint already waiting on another socket',
  ],
  [4003, '`timeout_ms` after hello, no `init` within `REMOTE_AUTH_INIT_MS`, or no heartbeat for 1.5 intervals'],
]

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/** Inline `code` spans of the tables' text. */
function cell(text: string): string {
  return escape(text).replace(/`([^`]+)`/g, '<code>$1</code>')
}

function table(id: string, head: string[], rows: Row[]): string {
  return `<table id="${id}"><thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${rows
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
answers the URL; <code>v=9</code> works too; <code>&amp;compress=zlib-stream</code> deflates every frame the server sends
with one zlib context per connection). Frames are JSON text: <code>{"op", "d", "s", "t"}</code>. The server sends
Hello; the client sends Identify (or Resume) within ${IDENTIFY_TIMEOUT_MS / 1000} s and a Heartbeat every
<code>heartbeat_interval</code> milliseconds. Events reach a session from the moment of its READY; a dropped session
can be resumed for <code>GATEWAY_RESUME_WINDOW_MS</code> (2 minutes by default) and gets what it missed.</p>
<h2>Opcodes</h2>
${table('opcodes', ['op', 'name', 'direction', 'd'], OPS)}
<p>Any other opcode (Discord's retired 12, 15, 16, 23-27, the server-only 0, 7, 9, 10, 11) closes 4001.</p>
<h2>Close codes</h2>
${table(
  'close-codes',
  ['code', 'name', 'when'],
  [
    ...closeCodes(),
    ...NEVER_SENT,
    [1001, 'Going Away', 'the server shuts down; reconnect and resume'],
    [
      1009,
      'Message Too Big',
      `a frame over ${WS_MAX_FRAME_BYTES / 1024} KiB (Bun's limit for every socket of the server)`,
    ],
  ],
)}
<p>A client that closes with 1000 or 1001 ends its session; any other close leaves it resumable.</p>
<h2>Dispatch events</h2>
<p>Lobby events go to the lobby's members (their user sessions, and their OAuth2 sessions of the lobby's
application that hold <code>lobbies.write</code>) and to the application's bot sessions. Guild and channel events go
to the user and bot sessions of the members who can view them; an OAuth2 session gets guild objects (READY's
<code>guilds</code>, GUILD_CREATE and GUILD_DELETE on joining or leaving) only with the <code>guilds</code> scope,
and never what happens inside a guild. Account events (USER_UPDATE, USER_SETTINGS_UPDATE, AUTH_SESSION_CHANGE) go
to the user's own sessions only.</p>
${table('events', ['t', 'sent to', 'd'], EVENTS)}
<h3>LOBBY_VOICE_SERVER_CLOSE reasons</h3>
${table('voice-close-reasons', ['reason', 'when'], VOICE_CLOSE_REASONS)}
<h2>Remote-auth WebSocket (QR login)</h2>
<p>The desktop side of QR login is Discord's remote-auth gateway v2 at <code>wss://&lt;host&gt;/remote-auth?v=2</code>
(the mobile side is REST: <code>POST /users/@me/remote-auth</code>, <code>…/finish</code>, <code>…/cancel</code>).
Frames are flat JSON objects <code>{"op": ..., ...}</code>.</p>
${table('remote-auth-frames', ['from', 'op', 'fields'], REMOTE_AUTH_FRAMES)}
${table('remote-auth-close-codes', ['code', 'when'], REMOTE_AUTH_CLOSE)}
</body></html>`
  return html
}

/** GET /api/docs/gateway */
export function gatewayDocsPage(): Response {
  return new Response(gatewayPage(), { headers: { 'content-type': 'text/html; charset=utf-8' } })
}
