// The two errors a call can end with: ApiError (the server answered: Discord's error body, or a body that was not
// one) and ConnectionError (the server was not reached, or the call was given up). Nothing else escapes a call.

export type FieldError = { code: string; message: string }
/** Discord's form errors (50035): `errors.<field>._errors[{code, message}]`, lists by index. */
export type ErrorTree = { _errors?: FieldError[]; [key: string]: ErrorTree | FieldError[] | undefined }
export type MfaMethod = { type: string; challenge?: string; backup_codes_allowed?: boolean }
/** What a 60003 answer carries: the ticket to prove a factor with at POST /mfa/finish, and the factors offered. */
export type MfaRequired = { ticket: string; methods: MfaMethod[] }

/** The server answered with an error: its HTTP status and Discord's body (`code`, `message`, `errors`). */
export class ApiError extends Error {
  override readonly name = 'ApiError'
  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** Discord's JSON error code (0 for a plain HTTP error or a body that was not Discord's). */
    readonly code: number,
    message: string,
    /** The whole body as parsed (undefined when it was not JSON). */
    readonly body?: Record<string, unknown>,
    /** 429: seconds to wait before trying again. */
    readonly retryAfter?: number,
    readonly method?: string,
    readonly path?: string,
  ) {
    super(message)
  }
  /** The form errors by field (50035). */
  get errors(): ErrorTree | undefined {
    return this.body?.errors as ErrorTree | undefined
  }
  /** 60003: the elevation the server asks for. */
  get mfa(): MfaRequired | undefined {
    return this.body?.mfa as MfaRequired | undefined
  }
  /** "path" → messages, nested fields joined with dots ("members.0.id"). */
  fieldErrors(): Record<string, string[]> {
    const out: Record<string, string[]> = {}
    const walk = (tree: ErrorTree | undefined, prefix: string) => {
      for (const [key, value] of Object.entries(tree ?? {})) {
        if (key === '_errors') (out[prefix] ??= []).push(...(value as FieldError[]).map((e) => e.message))
        else if (value && typeof value === 'object') walk(value as ErrorTree, prefix ? `${prefix}.${key}` : key)
      }
    }
    walk(this.errors, '')
    return out
  }
}

/** The server was not reached (network, DNS, refused, aborted, timed out), or a socket could not be kept. */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError'
  constructor(
    message: string,
    override readonly cause?: unknown,
    /** The Gateway's close code, when a socket closed for good (4004: the token was refused). */
    readonly closeCode?: number,
  ) {
    super(message)
  }
}
