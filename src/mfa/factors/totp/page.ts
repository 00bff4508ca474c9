// The authenticator app on the settings page: its state; enabling it (a new secret shown as the QR code of its
// otpauth:// URI and as text, confirmed by a code from the app and the password); removing it (elevated).
import { Secret, TOTP } from 'otpauth'
import { toString as qrSvg } from 'qrcode/lib/browser.js'
import type { BackupCode, FactorPage } from '../../factor-page'

/** Discord's authenticator type of an authenticator app (factor.ts). */
const AUTHENTICATOR_TYPE = 2

export const totpPage: FactorPage = {
  type: 'totp',
  section(page) {
    const { el, field, show, submitting, value } = page
    let pendingSecret: Secret | undefined

    const state = el('p', { class: 'muted', id: 'totp-state' })
    const start = el('button', { type: 'button', id: 'totp-start' }, 'Enable authenticator app')
    const remove = el('button', { type: 'button', class: 'secondary', id: 'totp-remove' }, 'Remove authenticator app')
    const cancel = el('button', { type: 'button', class: 'secondary', id: 'totp-cancel' }, 'Cancel')
    const qr = el('div', { class: 'qr', id: 'totp-qr', role: 'img', 'aria-label': 'QR code of the authenticator key' })
    const secretText = el('span', { class: 'secret', id: 'totp-secret' })
    const code = el('input', {
      id: 'totp-code',
      name: 'code',
      type: 'text',
      inputmode: 'numeric',
      autocomplete: 'one-time-code',
      class: 'code',
      required: true,
    })
    const password = el('input', {
      id: 'totp-password',
      name: 'password',
      type: 'password',
      autocomplete: 'current-password',
      required: true,
    })
    const form = el(
      'form',
      { id: 'totp-form', novalidate: true, hidden: true },
      el('p', {}, '1. Scan this QR code with your authenticator app, or type in the key.'),
      qr,
      el('p', {}, 'Key: ', secretText),
      el('p', {}, '2. Enter the six-digit code the app shows, and your password.'),
      field('Code', code),
      field('Password', password),
      el('div', { class: 'actions' }, el('button', { type: 'submit' }, 'Turn on'), cancel),
      el('p', { class: 'form-error', role: 'alert' }),
    )
    const section = page.section(
      'totp',
      'Authenticator app',
      state,
      el('div', { class: 'actions' }, start, remove),
      el('p', { class: 'form-error', id: 'totp-error', role: 'alert' }),
      form,
    )

    /** Only the action the state allows: enable when off, remove when on, and a sentence saying which it is. */
    function render() {
      const on = page.user().authenticator_types?.includes(AUTHENTICATOR_TYPE) ?? false
      state.textContent = on ? 'On: logins ask for a code from your app.' : 'Off.'
      section.dataset.state = on ? 'on' : 'off'
      show(start, !on && form.hidden)
      show(remove, on)
    }

    async function begin() {
      const me = page.user()
      pendingSecret = new Secret({ size: 20 })
      const uri = new TOTP({
        issuer: location.host,
        label: me.email ?? me.username,
        secret: pendingSecret,
        algorithm: 'SHA1',
        digits: 6,
        period: 30,
      }).toString()
      const svg = new DOMParser().parseFromString(
        await qrSvg(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }),
        'image/svg+xml',
      ).documentElement
      qr.replaceChildren(document.importNode(svg, true))
      secretText.textContent = pendingSecret.base32.replace(/(.{4})/g, '$1 ').trim()
      show(form)
      show(start, false)
      code.focus()
    }

    start.addEventListener('click', () => void begin())
    cancel.addEventListener('click', () => {
      pendingSecret = undefined
      form.reset()
      show(form, false)
      render()
    })
    form.addEventListener('submit', (event) => {
      event.preventDefault()
      void submitting(
        form,
        async () => {
          const reply = await page.api<{ token: string; backup_codes: BackupCode[] }>(
            'POST',
            '/users/@me/mfa/totp/enable',
            {
              secret: pendingSecret!.base32,
              code: value(form, 'code').replace(/\s+/g, ''),
              password: value(form, 'password', false),
            },
          )
          page.keepToken(reply)
          form.reset()
          show(form, false)
          await page.refresh()
          page.backupCodes.show(reply.backup_codes, true)
          page.say('Authenticator app turned on. Your other sessions were logged out.')
        },
        { 60001: 'code', 60005: 'code', 60008: 'code' },
      )
    })
    remove.addEventListener(
      'click',
      () =>
        void submitting(section, async () => {
          try {
            page.keepToken(await page.api('POST', '/users/@me/mfa/totp/disable'))
          } catch (error) {
            // Removed meanwhile (another tab): show the state as it is.
            if (page.codeOf(error) === 60002) await page.refresh()
            throw error
          }
          await page.refresh()
          page.say('Authenticator app removed.')
        }),
    )

    return { element: section, render }
  },
}
