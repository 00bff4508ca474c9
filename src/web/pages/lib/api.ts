// The API from the pages: fetch under /api/v9, the token kept in localStorage as Discord's web client keeps it
// (a JSON string under "token"), Discord error bodies as ApiFailure, and MFA elevation (60003) answered once by
// whatever handler the page installed.

export type FieldError = { code: string; message: string }
export type ErrorTree = { _errors?: FieldError[]; [key: string]: ErrorTree | FieldError[] | undefined }
export type MfaMethod = { type: string; challenge?: string; backup_codes_allowed?: boolean }
export type MfaRequired = { ticket: string; methods: MfaMethod[] }

/** A failed call: the HTTP status (0 when the server was not reached) and Discord's error body. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly body: Record<string, any> = {},
  ) {
    super(message)
  }
  get errors(): ErrorTree | undefined {
    return this.body.errors
  }
}

export const session = {
  token(): string | null {
    try {
      const raw = localStorage.getItem('token')
      const token = raw ? JSON.parse(raw) : null
      return typeof token === 'string' && token ? token : null
    } catch {
      return null
    }
  },
  set(token: string): void {
    localStorage.setItem('token', JSON.stringify(token))
  },
  clear(): void {
    localStorage.removeItem('token')
  },
}

type Options = { headers?: Record<string, string>; anonymous?: boolean; elevate?: boolean }
type Elevation = (mfa: MfaRequired) => Promise<string>
let elevation: Elevation | undefined

/** Pages that run sensitive requests install the dialog that proves a factor and returns the 5-minute JWT. */
export function onElevationRequired(handler: Elevation): void {
  elevation = handler
}

/** Call the API; resolves with the JSON body (undefined for 204) or throws ApiFailure. */
export async function api<T = any>(method: string, path: string, body?: unknown, options: Options = {}): Promise<T> {
  const headers: Record<string, string> = { ...options.headers }
  const token = options.anonymous ? null : session.token()
  if (token) headers.authorization = token
  if (body !== undefined) headers['content-type'] = 'application/json'
  let response: Response
  try {
    response = await fetch(`/api/v9${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    })
  } catch {
    throw new ApiFailure(0, -1, 'Could not reach the server. Check your connection and try again.')
  }
  const text = await response.text()
  let parsed: any
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    parsed = undefined
  }
  if (response.ok) return parsed as T
  const failure = failureOf(response.status, parsed)
  if (failure.code === 60003 && elevation && options.elevate !== false && parsed?.mfa) {
    const jwt = await elevation(parsed.mfa as MfaRequired)
    return api<T>(method, path, body, {
      ...options,
      elevate: false,
      headers: { ...options.headers, 'x-service-mfa-authorization': jwt },
    })
  }
  throw failure
}

function failureOf(status: number, body: any): ApiFailure {
  if (status === 429) {
    const seconds = Math.max(1, Math.ceil(Number(body?.retry_after ?? 1)))
    return new ApiFailure(
      429,
      body?.code ?? 0,
      `Too many attempts. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`,
      body ?? {},
    )
  }
  if (body && typeof body === 'object' && typeof body.message === 'string')
    return new ApiFailure(status, Number(body.code ?? 0), body.message, body)
  return new ApiFailure(status, 0, `The server answered ${status}. Try again later.`, {})
}

/** Flatten an error tree to "path" → messages ("members.0.id" for nested fields). */
export function flattenErrors(tree: ErrorTree | undefined, prefix = ''): Map<string, string[]> {
  const out = new Map<string, string[]>()
  if (!tree) return out
  for (const [key, value] of Object.entries(tree)) {
    if (key === '_errors') {
      const list = (value as FieldError[]).map((e) => e.message)
      if (list.length) out.set(prefix, [...(out.get(prefix) ?? []), ...list])
    } else if (value && typeof value === 'object') {
      for (const [path, messages] of flattenErrors(value as ErrorTree, prefix ? `${prefix}.${key}` : key))
        out.set(path, messages)
    }
  }
  return out
}

/** The error codes of one field of a 50035 body (e.g. to recognise ACCOUNT_LOGIN_VERIFICATION_EMAIL). */
export function fieldCodes(failure: ApiFailure, field: string): string[] {
  const node = failure.errors?.[field] as ErrorTree | undefined
  return (node?._errors ?? []).map((e) => e.code)
}
