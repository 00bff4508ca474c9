// The browser side of a second factor: its section of the security settings page (state, enrolment, removal). Each
// factor folder's page.ts exports one FactorPage and factors/pages.ts lists them; web/pages/security.ts builds the
// sections in the registry's order (factors/index.ts, which web/ tells the page). Browser code, bundled into the pages
// and typed by web/pages/tsconfig.json: neither this file nor a page.ts imports anything of the server.

/** The user as GET /users/@me answers: what a section shows its state from. */
export type SettingsUser = {
  username: string
  email: string | null
  phone: string | null
  mfa_enabled: boolean
  /** Discord's authenticator types on (mfa/factor.ts `authenticatorType`): 1 security key, 2 TOTP, 3 SMS. */
  authenticator_types?: number[]
}

/** A backup code as the API shows it (in clear only when just generated). */
export type BackupCode = { code: string; consumed: boolean }

type Attrs = Record<string, string | boolean | number | undefined | ((event: Event) => void)>
type Child = Node | string | null | undefined | false

/** What the settings page gives each section: the API, its DOM helpers, the user and the page's shared parts. */
export type SettingsPage = {
  /** The API as the page calls it: a sensitive request's 60003 is answered by the elevation dialog and repeated. */
  api<T = any>(method: string, path: string, body?: unknown): Promise<T>
  /** A failed call's Discord error code (undefined for anything else). */
  codeOf(error: unknown): number | undefined
  /** An error `submitting` shows beside the form's field `field` (as a 50035 answer's). */
  fieldError(field: string, message: string): Error
  /** An element with attributes (`on…` functions become listeners) and children (web/pages/lib/ui.ts). */
  el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs, ...children: Child[]): HTMLElementTagNameMap[K]
  /** A settings section `<name>-section` under its heading `<name>-title`, then `children`. */
  section(name: string, title: string, ...children: Child[]): HTMLElement
  /** A form field: the input (with an id) under its label. */
  field(label: string, input: HTMLInputElement): HTMLDivElement
  show(node: HTMLElement, visible?: boolean): void
  /** Buttons disabled while `work` runs; its error beside the field it names, else in the form's alert line. */
  submitting(form: HTMLElement, work: () => Promise<void>, codeFields?: Record<number, string>): Promise<boolean>
  /** A named value of a form (trimmed unless asked not to). */
  value(form: HTMLFormElement, name: string, trim?: boolean): string
  /** Why passkeys cannot work at this address (an IP, no https), or null. */
  passkeysUnavailable(): string | null
  /** The user as last read. */
  user(): SettingsUser
  /** The page's notice line. */
  say(message: string): void
  /** Keep the session token an answer carries (enabling MFA replaces the session's). */
  keepToken(reply: { token?: string } | undefined): void
  /** Read the user again and show every section's state anew (after a factor changed). */
  refresh(): Promise<void>
  /** The backup codes' display: enabling the first strong factor answers with the codes, shown once. */
  backupCodes: { element: HTMLElement; show(codes: readonly BackupCode[], fresh: boolean): void }
}

/** A factor's section, built once. */
export type FactorSection = {
  /** A <section>; the page puts it in the registry's place. */
  element: HTMLElement
  /** Read what the section lists besides the user (the security keys): before the first render. */
  load?(): Promise<void>
  /** Show the state of the user as last read (`page.user()`): a sentence, and only the actions it allows. */
  render(): void
}

export type FactorPage = {
  /** The factor's wire type (its SecondFactor's `type`). */
  type: string
  section(page: SettingsPage): FactorSection
}
