// The second-factor step shared by login, password reset and elevation, drawn for the SDK's MfaStep: choose one of the
// methods the server's answer offers, prove it (a security key through navigator.credentials, by the SDK), errors
// beside the code. How each method is asked for (label, kind of input, a code to send) is the server's too: web/ puts
// every method's description in the page (a meta tag, from mfa's registry), so no factor is named here.
import { client, type MfaMethod, type MfaStep } from './client'
import { Cancelled, el, show, submitting } from './ui'

/** How the page asks for a method (the server's mfa/factor.ts PagePrompt). */
type Prompt = {
  type: string
  label: string
  prompt?: string
  /** digits or text: a code typed in; password: hidden; assertion: the browser signs the method's challenge. */
  input: 'digits' | 'text' | 'password' | 'assertion'
  submit?: string
  /** A code is sent when asked for: POST /auth/mfa/<type>/send. */
  send?: boolean
}

let prompts: Map<string, Prompt> | undefined
/** Every method the server describes, by type, in its registry's order (the factors strongest first). */
function described(): Map<string, Prompt> {
  if (!prompts) {
    const meta = document.querySelector<HTMLMetaElement>('meta[name="mfa-methods"]')
    prompts = new Map((JSON.parse(meta?.content || '[]') as Prompt[]).map((p) => [p.type, p]))
  }
  return prompts
}

/** The server's description of a method (a method it did not describe: its type as the label, a text code). */
function promptOf(type: string): Prompt {
  return described().get(type) ?? { type, label: type, input: 'text' }
}

/** The types of the methods the server knows, in its registry's order (the settings page's order of sections). */
export function methodTypes(): string[] {
  return [...described().keys()]
}

/** Wrong-code answers belong beside the code field. */
export const CODE_ERRORS = { 50037: 'code', 60005: 'code', 60006: 'code', 60008: 'code', 60010: 'code' }

export type FactorOptions<T> = {
  /** The SDK's step: the methods the server offered, its SMS send, its verify. */
  step: MfaStep<T>
  title?: string
  /** The step was proved: what its verify answered. */
  done: (result: T) => void
  onCancel?: () => void
}

export function factorForm<T>(options: FactorOptions<T>): HTMLFormElement {
  const { step } = options
  const { methods } = step
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
  const sentNote = el('p', { class: 'hint', role: 'status' })
  const sendButton = el('button', { type: 'button', class: 'secondary' }, 'Send code')
  const sendRow = el('div', { class: 'actions' }, sendButton, sentNote)
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
        el('label', { for: id }, promptOf(method.type).label),
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
    methods.length > 1 ? chooser : el('p', { class: 'muted' }, `Verify with: ${promptOf(current.type).label}`),
    codeField,
    sendRow,
    actions,
    el('p', { class: 'form-error', role: 'alert' }),
  )

  function select(method: MfaMethod) {
    current = method
    const { input: kind, prompt, send, submit } = promptOf(method.type)
    const isKey = kind === 'assertion'
    show(codeField, !isKey)
    show(sendRow, !!send && method.type === 'sms')
    input.required = !isKey
    input.value = ''
    input.type = kind === 'password' ? 'password' : 'text'
    input.autocomplete = kind === 'password' ? 'current-password' : 'one-time-code'
    input.inputMode = kind === 'digits' ? 'numeric' : 'text'
    input.className = kind === 'password' ? '' : 'code'
    label.textContent = prompt ?? 'Code'
    submitButton.textContent = submit ?? 'Verify'
  }
  select(current)

  sendButton.addEventListener('click', () =>
    submitting(
      form,
      async () => {
        const to = await step.sendSms()
        sentNote.textContent = to ? `Code sent to ${to}.` : 'Code sent.'
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
        const kind = promptOf(current.type).input
        if (kind === 'assertion') return options.done(await step.verify(current.type))
        const data = input.value.trim().replace(/\s+/g, kind === 'password' ? ' ' : '')
        if (kind !== 'password' && !data) {
          input.focus()
          throw new Error('Enter the code.')
        }
        options.done(await step.verify(current.type, kind === 'password' ? input.value : data))
      },
      CODE_ERRORS,
    )
  })
  return form
}

/**
 * Answer 60003 (MFA required for a sensitive request) with a modal dialog: the SDK asks it once with the step, the
 * dialog proves a factor (POST /mfa/finish, by the step) and hands the JWT back; the SDK repeats the request with it.
 * Cancelling rejects with Cancelled, which the pages' forms ignore.
 */
export function installElevationDialog(): void {
  client.auth.onMfaRequired = (mfa) =>
    new Promise<string>((resolve, reject) => {
      const dialog = el('dialog', { 'aria-labelledby': 'elevate-title' })
      const close = (result?: string) => {
        dialog.close()
        dialog.remove()
        if (result) resolve(result)
        else reject(new Cancelled('elevation cancelled'))
      }
      const form = factorForm({ step: mfa, title: 'Confirm it’s you', done: close, onCancel: () => close() })
      form.querySelector('h2')!.id = 'elevate-title'
      dialog.append(form)
      dialog.addEventListener('cancel', (event) => {
        event.preventDefault()
        close()
      })
      document.body.append(dialog)
      dialog.showModal()
      form.querySelector<HTMLInputElement>('input:not([hidden]):not([type=radio])')?.focus()
    })
}
