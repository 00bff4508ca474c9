// The second-factor step shared by login, password reset and elevation: choose a method the account has (app code,
// security key or passkey, text message, backup code, password), prove it, errors beside the code.
import { startAuthentication } from '@simplewebauthn/browser'
import { api, onElevationRequired, type MfaMethod, type MfaRequired } from './api'
import { Cancelled, el, show, submitting } from './ui'

const LABELS: Record<string, string> = {
  totp: 'Authenticator app',
  webauthn: 'Security key or passkey',
  sms: 'Text message',
  backup: 'Backup code',
  password: 'Password',
}
const INPUT_LABELS: Record<string, string> = {
  totp: 'Six-digit code from your authenticator app',
  sms: 'Six-digit code from the text message',
  backup: 'Eight-character backup code',
  password: 'Your password',
}
/** Wrong-code answers belong beside the code field. */
export const CODE_ERRORS = { 50037: 'code', 60005: 'code', 60006: 'code', 60008: 'code', 60010: 'code' }

/** An answer that may ask for a second factor (login, password reset): the ticket and the account's methods. */
export type MfaChallenge = {
  ticket?: string
  mfa?: boolean
  totp?: boolean
  sms?: boolean
  backup?: boolean
  webauthn?: string | null
}

/** The methods of an MFA login body ({totp, sms, backup, webauthn}) in the shape elevation uses. */
export function methodsOfLogin(body: MfaChallenge): MfaMethod[] {
  const methods: MfaMethod[] = []
  if (body.webauthn) methods.push({ type: 'webauthn', challenge: body.webauthn })
  if (body.totp) methods.push({ type: 'totp' })
  if (body.sms) methods.push({ type: 'sms' })
  if (body.backup) methods.push({ type: 'backup' })
  return methods
}

/** The stringified credential for a WebAuthn challenge ({publicKey} JSON from the server). */
export async function signChallenge(challenge: string): Promise<string> {
  const { publicKey } = JSON.parse(challenge)
  return JSON.stringify(await startAuthentication({ optionsJSON: publicKey }))
}

export type FactorOptions = {
  methods: MfaMethod[]
  title?: string
  /** Prove the factor; throw (ApiFailure) to show the error beside the code. */
  submit: (type: string, data: string) => Promise<void>
  /** Text a code to the account's phone; returns the masked number. */
  sendSms?: () => Promise<string>
  onCancel?: () => void
}

export function factorForm(options: FactorOptions): HTMLFormElement {
  const methods = options.methods.length ? options.methods : [{ type: 'totp' }]
  let current = methods[0]
  const input = el('input', {
    id: 'mfa-code',
    name: 'code',
    type: 'text',
    autocomplete: 'one-time-code',
    spellcheck: 'false',
    required: true,
  })
  const label = el('label', { for: 'mfa-code' })
  const codeField = el('div', { class: 'field' }, label, input)
  const smsNote = el('p', { class: 'hint', role: 'status' })
  const sendButton = el('button', { type: 'button', class: 'secondary' }, 'Send code')
  const smsRow = el('div', { class: 'actions' }, sendButton, smsNote)
  const submitButton = el('button', { type: 'submit' }, 'Verify')
  const chooser = el('fieldset', { class: 'field' }, el('legend', {}, 'Verify with'))
  for (const method of methods) {
    const id = `mfa-method-${method.type}`
    chooser.append(
      el(
        'div',
        { class: 'field inline' },
        el('input', {
          type: 'radio',
          name: 'method',
          id,
          value: method.type,
          checked: method === current,
          onchange: () => select(method),
        }),
        el('label', { for: id }, LABELS[method.type] ?? method.type),
      ),
    )
  }
  const actions = el('div', { class: 'actions' }, submitButton)
  if (options.onCancel)
    actions.append(el('button', { type: 'button', class: 'secondary', onclick: () => options.onCancel!() }, 'Cancel'))
  const form = el(
    'form',
    { class: 'factor', novalidate: true },
    el('h2', {}, options.title ?? 'Two-factor authentication'),
    methods.length > 1 ? chooser : el('p', { class: 'muted' }, `Verify with: ${LABELS[current.type] ?? current.type}`),
    codeField,
    smsRow,
    actions,
    el('p', { class: 'form-error', role: 'alert' }),
  )

  function select(method: MfaMethod) {
    current = method
    const isKey = method.type === 'webauthn'
    show(codeField, !isKey)
    show(smsRow, method.type === 'sms' && !!options.sendSms)
    input.required = !isKey
    input.value = ''
    input.type = method.type === 'password' ? 'password' : 'text'
    input.autocomplete = method.type === 'password' ? 'current-password' : 'one-time-code'
    input.inputMode = method.type === 'totp' || method.type === 'sms' ? 'numeric' : 'text'
    input.className = method.type === 'password' ? '' : 'code'
    label.textContent = INPUT_LABELS[method.type] ?? 'Code'
    submitButton.textContent = isKey ? 'Use security key or passkey' : 'Verify'
  }
  select(current)

  sendButton.addEventListener('click', () =>
    submitting(
      form,
      async () => {
        smsNote.textContent = `Code sent to ${await options.sendSms!()}.`
        input.focus()
      },
      CODE_ERRORS,
    ),
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    void submitting(
      form,
      async () => {
        const data =
          current.type === 'webauthn'
            ? await signChallenge(current.challenge!)
            : input.value.trim().replace(/\s+/g, current.type === 'password' ? ' ' : '')
        if (current.type !== 'password' && current.type !== 'webauthn' && !data) {
          input.focus()
          throw new Error('Enter the code.')
        }
        await options.submit(current.type, current.type === 'password' ? input.value : data)
      },
      CODE_ERRORS,
    )
  })
  return form
}

/**
 * Answer 60003 (MFA required for a sensitive request) with a modal dialog: prove a factor through POST /mfa/finish
 * and hand the 5-minute JWT back to api(), which repeats the request with it.
 */
export function installElevationDialog(): void {
  onElevationRequired(
    (mfa: MfaRequired) =>
      new Promise<string>((resolve, reject) => {
        const dialog = el('dialog', { 'aria-labelledby': 'elevate-title' })
        const close = (result?: string) => {
          dialog.close()
          dialog.remove()
          if (result) resolve(result)
          else reject(new Cancelled('elevation cancelled'))
        }
        const form = factorForm({
          methods: mfa.methods,
          title: 'Confirm it’s you',
          submit: async (type, data) => {
            const { token } = await api<{ token: string }>(
              'POST',
              '/mfa/finish',
              { ticket: mfa.ticket, mfa_type: type, data },
              { elevate: false },
            )
            close(token)
          },
          sendSms: async () =>
            (await api<{ phone: string }>('POST', '/auth/mfa/sms/send', { ticket: mfa.ticket }, { anonymous: true }))
              .phone,
          onCancel: () => close(),
        })
        form.querySelector('h2')!.id = 'elevate-title'
        dialog.append(form)
        dialog.addEventListener('cancel', (event) => {
          event.preventDefault()
          close()
        })
        document.body.append(dialog)
        dialog.showModal()
        form.querySelector<HTMLInputElement>('input:not([hidden]):not([type=radio])')?.focus()
      }),
  )
}
