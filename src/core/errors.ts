// Discord's error bodies: {code, message, errors?}. Form errors nest by field: errors.<a>.<0>.<b>._errors[].

export type FieldError = { code: string; message: string }
export type ErrorTree = { _errors?: FieldError[]; [key: string]: ErrorTree | FieldError[] | undefined }

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly errors?: ErrorTree,
    readonly headers?: Record<string, string>,
    /** Extra top-level body fields (e.g. `mfa` on 60003, `retry_after` on 429). */
    readonly extra?: Record<string, unknown>,
  ) {
    super(message)
  }

  body(): Record<string, unknown> {
    return { ...this.extra, message: this.message, code: this.code, ...(this.errors ? { errors: this.errors } : {}) }
  }
}

/** An empty error tree. Keys come from clients (metadata keys), so the tree has no prototype to walk into. */
export function errorTree(): ErrorTree {
  return Object.create(null) as ErrorTree
}

/**
 * Put one field error into a tree. `path` is a list of keys (client-supplied keys stay whole, dots included) or, for
 * fixed field names, a dotted string ("members.0.id"; "" = the request itself). Nodes are created as own properties
 * of prototype-less objects, so no key ("__proto__", "constructor", "_errors") can reach a shared object.
 */
export function addFieldError(
  tree: ErrorTree,
  path: string | readonly (string | number)[],
  error: FieldError,
): ErrorTree {
  const keys = typeof path === 'string' ? path.split('.').filter(Boolean) : path.map(String)
  let node = tree
  for (const key of keys) {
    const existing = Object.hasOwn(node, key) ? node[key] : undefined
    if (existing && typeof existing === 'object' && !Array.isArray(existing)) {
      node = existing
      continue
    }
    const child = errorTree()
    Object.defineProperty(node, key, { value: child, enumerable: true, writable: true, configurable: true })
    node = child
  }
  const list = Object.hasOwn(node, '_errors') && Array.isArray(node._errors) ? node._errors : undefined
  if (list) list.push(error)
  else Object.defineProperty(node, '_errors', { value: [error], enumerable: true, writable: true, configurable: true })
  return tree
}

/** 400 50035 with the given field errors: formError({ login: ['INVALID_LOGIN', 'Login or password is invalid.'] }). */
export function formError(fields: Record<string, [code: string, message: string]>): ApiError {
  const tree = errorTree()
  for (const [path, [code, message]] of Object.entries(fields)) addFieldError(tree, path, { code, message })
  return new ApiError(400, 50035, 'Invalid Form Body', tree)
}

/** The errors every domain raises, with Discord's statuses, codes and messages. */
export const Errors = {
  unauthorized: () => new ApiError(401, 0, '401: Unauthorized'),
  notFound: () => new ApiError(404, 0, '404: Not Found'),
  /** A plain GET of a WebSocket path (/gateway). */
  notUpgraded: () => new ApiError(400, 0, 'Expected a websocket connection'),
  unknownApplication: () => new ApiError(404, 10002, 'Unknown Application'),
  unknownChannel: () => new ApiError(404, 10003, 'Unknown Channel'),
  unknownGuild: () => new ApiError(404, 10004, 'Unknown Guild'),
  unknownInvite: () => new ApiError(404, 10006, 'Unknown Invite'),
  unknownMember: () => new ApiError(404, 10007, 'Unknown Member'),
  unknownMessage: () => new ApiError(404, 10008, 'Unknown Message'),
  unknownRole: () => new ApiError(404, 10011, 'Unknown Role'),
  unknownUser: () => new ApiError(404, 10013, 'Unknown User'),
  unknownSession: () => new ApiError(404, 10020, 'Unknown Session'),
  unknownLobby: () => new ApiError(404, 10031, 'Unknown Lobby'),
  botsForbidden: () => new ApiError(403, 20001, 'Bots cannot use this endpoint'),
  botsOnly: () => new ApiError(403, 20002, 'Only bots can use this endpoint'),
  entityTooLarge: () => new ApiError(413, 40005, 'Request entity too large'),
  missingAccess: () => new ApiError(403, 50001, 'Missing Access'),
  invalidAccountType: () => new ApiError(403, 50002, 'Invalid account type'),
  missingPermissions: () => new ApiError(403, 50013, 'Missing Permissions'),
  invalidToken: () => new ApiError(401, 50014, 'Invalid authentication token provided'),
  missingScope: () => new ApiError(403, 50001, 'Missing Access'),
  invalidJson: () => new ApiError(400, 50109, 'The request body contains invalid JSON.'),
  invalidFormBody: (errors?: ErrorTree) => new ApiError(400, 50035, 'Invalid Form Body', errors),
  internal: () => new ApiError(500, 0, '500: Internal Server Error'),
  /** A store the request needs did not answer in time (several nodes: Redis hung or away); retry shortly. */
  unavailable: (retryAfterSeconds = 1) =>
    new ApiError(503, 0, '503: Service Unavailable', undefined, { 'Retry-After': String(retryAfterSeconds) }),
  rateLimited: (retryAfterSeconds: number, global = false) =>
    new ApiError(
      429,
      0,
      'You are being rate limited.',
      undefined,
      { 'Retry-After': String(Math.ceil(retryAfterSeconds)), ...(global ? { 'X-RateLimit-Global': 'true' } : {}) },
      { retry_after: Math.round(retryAfterSeconds * 1000) / 1000, global },
    ),
}
