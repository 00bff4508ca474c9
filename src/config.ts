// Configuration from the environment, typed and checked once at start.
// A bad value throws ConfigError naming the variable; main.ts prints it as one line and exits.
import { isIP } from 'node:net'
import { appState } from './core/app'
import { LOG_FORMATS, LOG_LEVELS, setLogOptions } from './core/log'

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`)
  const value = Number(raw)
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`)
  return value
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.toLowerCase()
  if (raw === undefined || raw === '') return fallback
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true
  if (['0', 'false', 'no', 'off'].includes(raw)) return false
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`)
}

function url(env: Env, name: string, fallback: string | undefined, protocols: string[]): string | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`)
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`)
  }
  return raw.replace(/\/+$/, '')
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, values: readonly T[]): T {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!(values as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`)
  }
  return raw as T
}

function list(env: Env, name: string, fallback: string[]): string[] {
  const raw = env[name]
  if (raw === undefined) return fallback
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

/** A line of text for people: no control characters, at most `max` characters. */
function text(env: Env, name: string, fallback: string, max: number): string {
  const raw = env[name]?.trim()
  if (raw === undefined || raw === '') return fallback
  if (/[\x00-\x1f\x7f]/.test(raw) || raw.length > max)
    throw new ConfigError(`${name} must be one line of at most ${max} characters`)
  return raw
}

function ipAddress(env: Env, name: string): string | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  if (isIP(raw) === 0) throw new ConfigError(`${name} must be an IP address, got "${raw}"`)
  return raw
}

/** VOICE_PORT_MIN and VOICE_PORT_MAX: both or neither, min below max. */
function portRange(env: Env, minName: string, maxName: string): [number, number] | undefined {
  const min = int(env, minName, 0, 1024, 65535)
  const max = int(env, maxName, 0, 1024, 65535)
  if (min === 0 && max === 0) return undefined
  if (min === 0 || max === 0)
    throw new ConfigError(`${min === 0 ? minName : maxName} must be set with ${min === 0 ? maxName : minName}`)
  if (min >= max) throw new ConfigError(`${maxName} must be above ${minName}, got ${min}-${max}`)
  return [min, max]
}

function iceUrls(env: Env, name: string): string[] {
  const urls = list(env, name, [])
  for (const u of urls)
    if (!/^(turns?|stun):[^\s]+$/.test(u))
      throw new ConfigError(`${name} must list turn:, turns: or stun: URLs, got "${u}"`)
  return urls
}

/**
 * Which peers may set the client address through X-Forwarded-For: false (none: the socket's address is the client),
 * a number of proxy hops in front of the server (true = 1), or the proxies' addresses, CIDR ranges and the names
 * loopback, linklocal, uniquelocal (alias private). http/client-ip.ts applies it.
 */
export type TrustProxy = boolean | number | readonly string[]

/** The named ranges TRUST_PROXY accepts (Express's names). */
export const TRUST_PROXY_RANGES: Record<string, readonly string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
}

function trustProxy(env: Env, name: string): TrustProxy {
  const raw = env[name]?.trim()
  if (raw === undefined || raw === '') return false
  const lower = raw.toLowerCase()
  if (['0', 'false', 'no', 'off'].includes(lower)) return false
  if (['true', 'yes', 'on'].includes(lower)) return 1
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw)
    if (hops > 32) throw new ConfigError(`${name} must be a hop count up to 32, got ${hops}`)
    return hops
  }
  const entries = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  for (const entry of entries) {
    if (Object.hasOwn(TRUST_PROXY_RANGES, entry.toLowerCase())) continue
    const [address, prefix, extra] = entry.split('/')
    const family = isIP(address)
    const bits = family === 4 ? 32 : 128
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits)
    if (family === 0 || !prefixOk || extra !== undefined) {
      throw new ConfigError(
        `${name} must be true, a hop count, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal, uniquelocal; "${entry}" is none of these`,
      )
    }
  }
  return entries
}

/**
 * REDIS_URL turns cluster mode on: several nodes share the Gateway's log, sessions and security limits in Redis and
 * their data in PostgreSQL. With SQLite (no postgres DATABASE_URL) it is refused: one file cannot be shared by nodes.
 */
function clusterRedisUrl(env: Env): string | undefined {
  const redisUrl = url(env, 'REDIS_URL', undefined, ['redis:', 'rediss:'])
  if (redisUrl && !/^postgres(ql)?:\/\//.test(env.DATABASE_URL ?? ''))
    throw new ConfigError(
      'REDIS_URL is for several nodes, which share their data on PostgreSQL: set DATABASE_URL=postgres://… too, or unset REDIS_URL to run one server on SQLite',
    )
  return redisUrl
}

/**
 * The public address (a load balancer's, for several nodes): PUBLIC_URL or BASE_URL, two names for one setting (the
 * cluster's notes and issue call it PUBLIC_URL, the single server's docs BASE_URL). Both set to different addresses is
 * refused: one of them would be silently ignored.
 */
function publicUrl(env: Env): string | undefined {
  const base = url(env, 'BASE_URL', undefined, ['http:', 'https:'])
  const pub = url(env, 'PUBLIC_URL', undefined, ['http:', 'https:'])
  if (base && pub && base !== pub)
    throw new ConfigError(
      `PUBLIC_URL (${pub}) and BASE_URL (${base}) name one setting, the public address: set one of them`,
    )
  return pub ?? base
}

/** Whether the public address was given (else it follows the port the server got). */
export const publicUrlGiven = (env: Env = process.env): boolean => publicUrl(env) !== undefined

export function loadConfig(env: Env = process.env) {
  const port = int(env, 'PORT', 8080, 0, 65535)
  const host = env.HOST || '0.0.0.0'
  const publicHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host
  const baseUrl = publicUrl(env) ?? `http://${publicHost}:${port}`
  const webUrl = url(env, 'WEB_URL', baseUrl, ['http:', 'https:'])!
  return {
    port,
    host,
    databasePath: env.DATABASE_PATH || './data/app.sqlite',
    /** A PostgreSQL server (postgres://…): the stores run on it instead of the SQLite file of DATABASE_PATH. */
    databaseUrl: url(env, 'DATABASE_URL', undefined, ['postgres:', 'postgresql:']),
    /** Several nodes share Redis (cluster mode: with DATABASE_URL on PostgreSQL, never with SQLite). */
    redisUrl: clusterRedisUrl(env),
    /**
     * A node's id lease (cluster mode): how long a node that died silently still counts as alive — its presence, calls
     * and desktops wait this long before another node ends them. Renewed every quarter of it; a node that cannot
     * renew in time (Redis away, a stalled process) leaves the cluster rather than mint a snowflake id twice.
     */
    nodeLeaseMs: int(env, 'NODE_LEASE_MS', 20_000, 3000, 300_000),
    /** synchronous=FULL survives power loss; NORMAL (default) survives process crashes. */
    databaseSyncFull: bool(env, 'DATABASE_SYNC_FULL', false),
    baseUrl,
    webUrl,
    /** WebAuthn relying party; unset: the host name and origin of WEB_URL. */
    webauthnRpId: env.WEBAUTHN_RP_ID || undefined,
    webauthnOrigins: env.WEBAUTHN_ORIGINS ? list(env, 'WEBAUTHN_ORIGINS', []) : undefined,
    smtpUrl: url(env, 'SMTP_URL', undefined, ['smtp:', 'smtps:']),
    mailFrom: env.MAIL_FROM || 'no-reply@localhost',
    smsWebhookUrl: url(env, 'SMS_WEBHOOK_URL', undefined, ['http:', 'https:']),
    /** How long the SMS webhook, and each step of an SMTP conversation, may take before the message counts as failed. */
    deliveryTimeoutMs: int(env, 'DELIVERY_TIMEOUT_MS', 10_000, 100, 120_000),
    trustProxy: trustProxy(env, 'TRUST_PROXY'),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', LOG_LEVELS),
    /** text: `<time> <LEVEL> <message> key=value ...`; json: one object per line. */
    logFormat: oneOf(env, 'LOG_FORMAT', 'text', LOG_FORMATS),
    /** GET /metrics on the main port (Prometheus text). */
    metrics: bool(env, 'METRICS', false),
    /** When set, /metrics wants `Authorization: Bearer <token>`. */
    metricsToken: env.METRICS_TOKEN || undefined,
    /** A separate listener for /metrics only (0: none), on METRICS_HOST. */
    metricsPort: int(env, 'METRICS_PORT', 0, 0, 65535),
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    /** Largest request body accepted, in bytes. */
    maxBodyBytes: int(env, 'MAX_BODY_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    /** Per-route rate limits (http/rate-limits.ts) answer 429 past their limit; off: headers only (benchmarks). */
    routeRateLimits: bool(env, 'ROUTE_RATE_LIMITS', true),
    /** Application event webhooks may go to loopback, private and link-local addresses (off: SSRF guard). */
    eventWebhooksAllowPrivate: bool(env, 'EVENT_WEBHOOKS_ALLOW_PRIVATE', false),
    /** How long an application's event webhook may take to answer (Discord: 3 s) before the call counts as failed. */
    eventWebhookTimeoutMs: int(env, 'EVENT_WEBHOOK_TIMEOUT_MS', 3000, 100, 60_000),
    /**
     * OIDC issuers of provisional accounts (provisional/oidc.ts) may be loopback, private or link-local addresses (off:
     * the same SSRF guard as event webhooks).
     */
    externalAuthAllowPrivate: bool(env, 'EXTERNAL_AUTH_ALLOW_PRIVATE', false),
    /** How long an OIDC issuer's discovery document or JWKS may take to arrive before 530008 / 530009. */
    externalAuthTimeoutMs: int(env, 'EXTERNAL_AUTH_TIMEOUT_MS', 3000, 100, 60_000),
    /** How long a client may take to send a request body before it is answered 408. */
    bodyTimeoutMs: int(env, 'BODY_TIMEOUT_MS', 30_000, 100, 600_000),
    gatewayHeartbeatMs: int(env, 'GATEWAY_HEARTBEAT_MS', 41250, 100, 600000),
    /** How long a disconnected gateway session stays resumable. */
    gatewayResumeWindowMs: int(env, 'GATEWAY_RESUME_WINDOW_MS', 120000, 1000, 3600000),
    /** What the resume buffer (recent dispatches) may hold, in bytes; a Resume from before what it holds gets op 9. */
    gatewayReplayBytes: int(env, 'GATEWAY_REPLAY_BYTES', 64 * 1024 * 1024, 64 * 1024, 16 * 1024 * 1024 * 1024),
    /** Remote-auth gateway (/remote-auth): heartbeat interval and socket lifetime announced in hello, init deadline. */
    remoteAuthHeartbeatMs: int(env, 'REMOTE_AUTH_HEARTBEAT_MS', 41250, 100, 600000),
    remoteAuthTimeoutMs: int(env, 'REMOTE_AUTH_TIMEOUT_MS', 150000, 1000, 3600000),
    remoteAuthInitMs: int(env, 'REMOTE_AUTH_INIT_MS', 30000, 100, 600000),
    /** Remote-auth sockets open at once from one IP. */
    remoteAuthSocketsPerIp: int(env, 'REMOTE_AUTH_SOCKETS_PER_IP', 10, 1, 10000),
    /** Idle time after which a user session expires. */
    sessionIdleDays: int(env, 'SESSION_IDLE_DAYS', 90, 1, 3650),
    /** Refuse logins from new IPs until confirmed by e-mail. */
    newLoginLocationCheck: bool(env, 'NEW_LOGIN_LOCATION_CHECK', true),
    /** ISO country codes whose users must give explicit consent at registration. */
    consentCountries: list(env, 'CONSENT_REQUIRED_COUNTRIES', [
      'AT',
      'BE',
      'BG',
      'HR',
      'CY',
      'CZ',
      'DK',
      'EE',
      'FI',
      'FR',
      'DE',
      'GR',
      'HU',
      'IE',
      'IT',
      'LV',
      'LT',
      'LU',
      'MT',
      'NL',
      'PL',
      'PT',
      'RO',
      'SK',
      'SI',
      'ES',
      'SE',
      'GB',
      'IS',
      'LI',
      'NO',
      'CH',
      'KR',
    ]),
    /** Lobby voice (src/voice/): the address announced in the server's ICE host candidates (unset: the interfaces' own). */
    voicePublicIp: ipAddress(env, 'VOICE_PUBLIC_IP'),
    /** UDP ports the call peers bind (unset: any free port). */
    voicePortRange: portRange(env, 'VOICE_PORT_MIN', 'VOICE_PORT_MAX'),
    /** TURN (or STUN) servers handed to call clients, e.g. a coturn; credentials static or from a coturn auth secret. */
    voiceTurnUrls: iceUrls(env, 'VOICE_TURN_URLS'),
    voiceTurnUsername: env.VOICE_TURN_USERNAME || undefined,
    voiceTurnCredential: env.VOICE_TURN_CREDENTIAL || undefined,
    voiceTurnSecret: env.VOICE_TURN_SECRET || undefined,
    /** Members in one lobby call. The answer SDP grows with it and must fit the Gateway's 15 KiB frame: 30 at most. */
    voiceMaxCallSize: int(env, 'VOICE_MAX_CALL_SIZE', 25, 2, 30),
    /** Datagrams per second one member may send before the excess is dropped (Opus at 20 ms is 50 a second). */
    voiceMaxPacketsPerSecond: int(env, 'VOICE_MAX_PACKETS_PER_SECOND', 120, 20, 10000),
    /** The web client: the name in every page's header and title, and the logo beside it (https: or http: URL). */
    productName: text(env, 'PRODUCT_NAME', 'Lobby server', 64),
    logoUrl: url(env, 'LOGO_URL', undefined, ['http:', 'https:']),
    /** Where registration's Terms of Service and Privacy Policy link to (unset: named without a link). */
    termsUrl: url(env, 'TERMS_URL', undefined, ['http:', 'https:']),
    privacyUrl: url(env, 'PRIVACY_URL', undefined, ['http:', 'https:']),
  }
}

export type Config = ReturnType<typeof loadConfig>

/** The configuration in force in this App (core/app.ts). */
const newConfig = (): { config?: Config } => ({})
declare module './core/app' {
  interface AppState {
    config: ReturnType<typeof newConfig>
  }
}
const inForce = appState('config', newConfig)

/** The configuration in force; loaded from the environment on first use. */
export function config(): Config {
  return inForce().config ?? setConfig(loadConfig())
}

/** Replace the configuration (start-up and tests). */
export function setConfig(next: Config): Config {
  inForce().config = next
  setLogOptions(next.logLevel, next.logFormat)
  return next
}
