// Cookies a client sent, read without throwing. A value is percent-decoded when it decodes; a malformed encoding
// (`%`, `%E0%A4%A`, a lone surrogate) is kept as sent, as the `cookie` package does, so a caller sees a string that
// simply fails its check (an elevation JWT that does not verify) instead of an exception that would answer 500.

/** The value of cookie `name` in the request's Cookie header (the first one), or undefined. */
export function cookieValue(request: Request, name: string): string | undefined {
  const header = request.headers.get('cookie')
  if (!header) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue
    let value = part.slice(eq + 1).trim()
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
    return decodeOrKeep(value)
  }
  return undefined
}

/** decodeURIComponent, or the value as it is when it is not a valid percent-encoding of UTF-8. */
export function decodeOrKeep(value: string): string {
  if (!value.includes('%')) return value
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}
