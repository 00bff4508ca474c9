// Small DOM helpers shared by the pages: building elements without innerHTML, errors beside the field they name,
// busy buttons, tokens taken out of links, and where to go after logging in.
// A failed call: the SDK's ApiError or ConnectionError (and the lobby page's own client's failure, the same shape).
type Failure = { status: number; code: number; message: string; errors?: ErrorTree; retryAfter?: number }
type ErrorTree = { _errors?: { message: string }[]; [key: string]: unknown }

function failureOf(error: unknown): Failure {
  const e = error as Partial<Failure> & { name?: string }
  if (e && typeof e.status === 'number' && typeof e.code === 'number') {
    if (e.status === 429 && typeof e.retryAfter === 'number') {
      const seconds = Math.max(1, Math.ceil(Number(e.retryAfter ?? 1)))
      return {
        status: 429,
        code: e.code,
        message: `Too many attempts. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`,
      }
    }
    return e as Failure
  }
  if (e?.name === 'ConnectionError')
    return { status: 0, code: -1, message: 'Could not reach the server. Check your connection and try again.' }
  return { status: 0, code: -1, message: error instanceof Error ? error.message : String(error) }
}

/** A 50035 tree as "path" → messages ("members.0.id" for nested fields). */
function flattenErrors(tree: ErrorTree | undefined, prefix = ''): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const [key, value] of Object.entries(tree ?? {})) {
    if (key === '_errors') {
      const list = (value as { message: string }[]).map((e) => e.message)
      if (list.length) out.set(prefix, [...(out.get(prefix) ?? []), ...list])
    } else if (value && typeof value === 'object') {
      for (const [path, messages] of flattenErrors(value as ErrorTree, prefix ? `${prefix}.${key}` : key))
        out.set(path, messages)
    }
  }
  return out
}

/** Every message of a failure's field errors (a link page shows them all). */
export function fieldMessages(error: unknown): string[] {
  return [...flattenErrors(failureOf(error).errors).values()].flat()
}

export function $<T extends HTMLElement = HTMLElement>(selector: string, root: ParentNode = document): T {
  const found = root.querySelector<T>(selector)
  if (!found) throw new Error(`missing element ${selector}`)
  return found
}

type Attrs = Record<string, string | boolean | number | undefined | ((event: Event) => void)>

/** An element with attributes (`on…` functions become listeners) and children (strings become text). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  // A form ever submitted without its handler posts its fields in the body, never in the URL.
  if (tag === 'form') node.setAttribute('method', 'post')
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue
    if (typeof value === 'function') node.addEventListener(name.slice(2), value)
    else if (value === true) node.setAttribute(name, '')
    else node.setAttribute(name, String(value))
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child)
  return node
}

/** A form field: the input (which has an id) under its label. */
export function field(label: string, input: HTMLInputElement): HTMLDivElement {
  return el('div', { class: 'field' }, el('label', { for: input.id }, label), input)
}

export function show(node: HTMLElement, visible = true): void {
  node.hidden = !visible
}

/** Field name of an input for error paths: its `name`, or `data-field` when several inputs share one error. */
function fieldOf(form: HTMLElement, path: string): HTMLElement | null {
  return (
    form.querySelector<HTMLElement>(`[data-field="${CSS.escape(path)}"]`) ??
    form.querySelector<HTMLElement>(`[name="${CSS.escape(path)}"]`)
  )
}

function errorSlot(form: HTMLElement, input: HTMLElement): HTMLElement {
  const id = `${input.id || input.getAttribute('name')}-error`
  let slot = form.querySelector<HTMLElement>(`#${CSS.escape(id)}`)
  if (!slot) {
    slot = el('p', { id, class: 'field-error' })
    ;(input.closest('.field') ?? input).append(slot)
  }
  return slot
}

function formSlot(form: HTMLElement): HTMLElement {
  let slot = form.querySelector<HTMLElement>(':scope > .form-error, .form-error')
  if (!slot) {
    slot = el('p', { class: 'form-error', role: 'alert' })
    form.append(slot)
  }
  return slot
}

export function clearErrors(form: HTMLElement): void {
  for (const slot of form.querySelectorAll<HTMLElement>('.field-error, .form-error')) slot.textContent = ''
  for (const input of form.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid')
}

/**
 * Show a failure on a form: each path of a 50035 `errors` tree beside its field, codes listed in `codeFields`
 * (e.g. 60008 → "code") beside that field, anything else in the form's alert line. Focuses the first bad field.
 */
export function showErrors(form: HTMLElement, error: unknown, codeFields: Record<number, string> = {}): void {
  clearErrors(form)
  const failure = failureOf(error)
  const leftover: string[] = []
  let first: HTMLElement | null = null
  const place = (path: string, messages: string[]) => {
    const input = path ? fieldOf(form, path) : null
    if (!input) return leftover.push(...messages)
    errorSlot(form, input).textContent = messages.join(' ')
    input.setAttribute('aria-invalid', 'true')
    const slotId = errorSlot(form, input).id
    const described = new Set((input.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean))
    described.add(slotId)
    input.setAttribute('aria-describedby', [...described].join(' '))
    // Once the person changes the field, its error goes: it described the old value.
    const fixed = () => {
      errorSlot(form, input).textContent = ''
      input.removeAttribute('aria-invalid')
      input.removeEventListener('input', fixed)
      input.removeEventListener('change', fixed)
    }
    input.addEventListener('input', fixed)
    input.addEventListener('change', fixed)
    first ??= input
  }
  const tree = flattenErrors(failure.errors)
  if (tree.size) for (const [path, messages] of tree) place(path, messages)
  else if (codeFields[failure.code]) place(codeFields[failure.code], [failure.message])
  else leftover.push(failure.message)
  if (leftover.length) formSlot(form).textContent = leftover.join(' ')
  ;(first as HTMLElement | null)?.focus()
}

/** Disable a form's buttons while `work` runs; errors land on the form. Returns whether `work` succeeded. */
export async function submitting(
  form: HTMLElement,
  work: () => Promise<void>,
  codeFields?: Record<number, string>,
): Promise<boolean> {
  const buttons = [...form.querySelectorAll<HTMLButtonElement>('button')]
  buttons.forEach((b) => (b.disabled = true))
  form.setAttribute('aria-busy', 'true')
  clearErrors(form)
  try {
    await work()
    return true
  } catch (error) {
    if (!(error instanceof Cancelled)) showErrors(form, error, codeFields)
    return false
  } finally {
    buttons.forEach((b) => (b.disabled = false))
    form.removeAttribute('aria-busy')
  }
}

/** Thrown when the person closes a dialog: nothing to report. */
export class Cancelled extends Error {}

/** A named value of a form (trimmed unless asked not to). */
export function value(form: HTMLFormElement, name: string, trim = true): string {
  const input = form.elements.namedItem(name) as HTMLInputElement | null
  const v = input?.value ?? ''
  return trim ? v.trim() : v
}

/**
 * The token a mailed link carries (`#token=…`, or the last path segment after `pathPrefix`), taken out of the
 * address bar and history at once. It stays in this tab's sessionStorage until `forgetLinkToken`, so a reload works.
 */
export function takeLinkToken(page: string, pathPrefix?: string): string | null {
  const key = `link-token:${page}`
  let token: string | null = null
  const fragment = new URLSearchParams(location.hash.slice(1))
  if (fragment.get('token')) token = fragment.get('token')
  else if (pathPrefix && location.pathname.startsWith(`${pathPrefix}/`))
    token = decodeURIComponent(location.pathname.slice(pathPrefix.length + 1)) || null
  if (token) {
    sessionStorage.setItem(key, token)
    history.replaceState(null, '', (pathPrefix ?? location.pathname) + location.search)
    return token
  }
  return sessionStorage.getItem(key)
}

export function forgetLinkToken(page: string): void {
  sessionStorage.removeItem(`link-token:${page}`)
}

/** A same-site path from `?redirect_to=` (never another origin), or the fallback. */
export function redirectTarget(fallback = '/app'): string {
  const target = new URLSearchParams(location.search).get('redirect_to')
  if (!target || !target.startsWith('/') || target.startsWith('//') || target.startsWith('/\\')) return fallback
  try {
    const url = new URL(target, location.origin)
    return url.origin === location.origin ? url.pathname + url.search + url.hash : fallback
  } catch {
    return fallback
  }
}

/** The path segment after `prefix` ("/ra/<this>"), decoded; empty when absent or malformed. */
export function pathParameter(prefix: string): string {
  const raw = location.pathname.startsWith(prefix) ? location.pathname.slice(prefix.length).split('/')[0]! : ''
  try {
    return decodeURIComponent(raw)
  } catch {
    return ''
  }
}

/** Send someone without a session to the login page, coming back here afterwards. */
export function goLogin(): never {
  location.replace(`/login?redirect_to=${encodeURIComponent(location.pathname + location.search)}`)
  throw new Cancelled('redirecting to login')
}

/** A text file download (backup codes). */
export function download(filename: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }))
  const link = el('a', { href: url, download: filename })
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 1000)
}

/** Run after a short pause in typing; the latest call wins. */
export function debounce<A extends unknown[]>(fn: (...args: A) => void, ms = 300): (...args: A) => void {
  let timer: ReturnType<typeof setTimeout> | undefined
  return (...args: A) => {
    clearTimeout(timer)
    timer = setTimeout(() => fn(...args), ms)
  }
}

/**
 * Why passkeys and security keys cannot work at this address, or null. WebAuthn takes a domain name (or localhost)
 * as relying party, never an IP address, and wants a secure context (https, or localhost).
 */
export function passkeysUnavailable(): string | null {
  const host = location.hostname
  if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(host) || host.includes(':'))
    return `Passkeys and security keys need this site opened by its name (a domain, or localhost), not an IP address (${host}). Ask whoever runs it to give BASE_URL a name.`
  if (!window.isSecureContext) return 'Passkeys and security keys need a secure (https) connection to this site.'
  return null
}

/** Move focus to the first heading in `root` (or root itself): neutral, so no Enter lands on a button by default. */
export function focusHeading(root: HTMLElement): void {
  const target = root.querySelector<HTMLElement>('h1, h2') ?? root.closest<HTMLElement>('.card') ?? root
  if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1')
  target.focus()
}
