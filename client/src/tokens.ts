// Where the token lives between runs: the app's choice. Memory by default; localStorage for pages (the same key and
// format as Discord's web client: a JSON string under "token").

export type TokenKind = 'Bearer' | 'Bot' | undefined
export type StoredToken = { token: string; kind?: TokenKind }

export interface TokenStore {
  get(): StoredToken | null
  set(token: StoredToken | null): void
}

export function memoryTokenStore(initial: StoredToken | null = null): TokenStore {
  let held = initial
  return {
    get: () => held,
    set: (token) => {
      held = token
    },
  }
}

/** A store in `localStorage` (`key`, default "token"; the kind beside it under `${key}_kind`). */
export function localStorageTokenStore(key = 'token'): TokenStore {
  const storage = () => (globalThis as { localStorage?: Storage }).localStorage
  return {
    get() {
      try {
        const raw = storage()?.getItem(key)
        const token = raw ? JSON.parse(raw) : null
        if (typeof token !== 'string' || !token) return null
        const kind = storage()?.getItem(`${key}_kind`)
        return { token, kind: kind === 'Bearer' || kind === 'Bot' ? kind : undefined }
      } catch {
        return null
      }
    },
    set(value) {
      const s = storage()
      if (!s) return
      if (!value) {
        s.removeItem(key)
        s.removeItem(`${key}_kind`)
        return
      }
      s.setItem(key, JSON.stringify(value.token))
      if (value.kind) s.setItem(`${key}_kind`, value.kind)
      else s.removeItem(`${key}_kind`)
    },
  }
}

/** The Authorization header of a token: user tokens bare (as Discord's clients send them), others with the kind. */
export function authorization(token: StoredToken | null): string | undefined {
  if (!token?.token) return undefined
  return token.kind ? `${token.kind} ${token.token}` : token.token
}
