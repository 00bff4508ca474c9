// Text messages on the settings page: the state; turning them on (a verified phone and MFA on) and off (elevated) with
// the password; and, without a phone, adding one (a texted code, then the password).
import type { FactorPage } from '../../factor-page'

/** Discord's authenticator type of SMS (factor.ts). */
const AUTHENTICATOR_TYPE = 3

export const smsPage: FactorPage = {
  type: 'sms',
  section(page) {
    const { el, field, show, submitting, value } = page
    let phoneStep: 'send' | 'verify' | 'save' = 'send'
    let phoneToken = ''
    const on = () => page.user().authenticator_types?.includes(AUTHENTICATOR_TYPE) ?? false

    const state = el('p', { class: 'muted', id: 'sms-state' })
    const turnOn = el('button', { type: 'submit', value: 'enable', id: 'sms-on' }, 'Turn on SMS')
    const turnOff = el(
      'button',
      { type: 'submit', value: 'disable', class: 'secondary', id: 'sms-off' },
      'Turn off SMS',
    )
    const smsForm = el(
      'form',
      { id: 'sms-form', novalidate: true, hidden: true },
      field(
        'Password',
        el('input', {
          id: 'sms-password',
          name: 'password',
          type: 'password',
          autocomplete: 'current-password',
          required: true,
        }),
      ),
      el('div', { class: 'actions' }, turnOn, turnOff),
      el('p', { class: 'form-error', role: 'alert' }),
    )

    const codeInput = el('input', {
      id: 'phone-code',
      name: 'code',
      type: 'text',
      inputmode: 'numeric',
      autocomplete: 'one-time-code',
      class: 'code',
    })
    const passwordInput = el('input', {
      id: 'phone-password',
      name: 'password',
      type: 'password',
      autocomplete: 'current-password',
    })
    const codeField = field('Code from the text message', codeInput)
    codeField.id = 'phone-code-field'
    codeField.hidden = true
    const passwordField = field('Password', passwordInput)
    passwordField.id = 'phone-password-field'
    passwordField.hidden = true
    const phoneSubmit = el('button', { type: 'submit', id: 'phone-submit' }, 'Send a code')
    const phoneForm = el(
      'form',
      { id: 'phone-form', novalidate: true, hidden: true },
      field(
        'Phone number (with country code, e.g. +14155550123)',
        el('input', { id: 'phone', name: 'phone', type: 'tel', autocomplete: 'tel', required: true }),
      ),
      codeField,
      passwordField,
      el('div', { class: 'actions' }, phoneSubmit),
      el('p', { class: 'form-error', role: 'alert' }),
    )

    const section = page.section('sms', 'Text message (SMS)', state, smsForm, phoneForm)

    function render() {
      const me = page.user()
      const hasPhone = !!me.phone
      state.textContent = on()
        ? `On: text messages to ${me.phone} can stand in for your authenticator.`
        : !hasPhone
          ? 'Off. Add a phone number to use text messages.'
          : me.mfa_enabled
            ? `Off. Turn it on to receive codes at ${me.phone}.`
            : `Off. Phone ${me.phone}. Text messages can be turned on once an authenticator app or a security key is set up.`
      section.dataset.state = on() ? 'on' : 'off'
      show(smsForm, on() || (hasPhone && me.mfa_enabled))
      show(turnOn, !on())
      show(turnOff, on())
      show(phoneForm, !hasPhone)
    }

    smsForm.addEventListener('submit', (event) => {
      event.preventDefault()
      const action = on() ? 'disable' : 'enable'
      void submitting(smsForm, async () => {
        await page.api('POST', `/users/@me/mfa/sms/${action}`, { password: value(smsForm, 'password', false) })
        smsForm.reset()
        await page.refresh()
        page.say(action === 'enable' ? 'Text-message codes turned on.' : 'Text-message codes turned off.')
      })
    })

    phoneForm.addEventListener('submit', (event) => {
      event.preventDefault()
      void submitting(
        phoneForm,
        async () => {
          const phone = value(phoneForm, 'phone')
          if (phoneStep === 'send') {
            await page.api('POST', '/users/@me/phone', { phone })
            phoneStep = 'verify'
            show(codeField)
            phoneSubmit.textContent = 'Verify the code'
            codeInput.focus()
          } else if (phoneStep === 'verify') {
            const code = value(phoneForm, 'code')
            const verified = await page.api<{ token: string }>('POST', '/phone-verifications/verify', { phone, code })
            phoneToken = verified.token
            phoneStep = 'save'
            show(codeField, false)
            show(passwordField)
            phoneSubmit.textContent = 'Add phone number'
            passwordInput.focus()
          } else {
            await page.api('POST', '/users/@me/phone', {
              phone_token: phoneToken,
              password: value(phoneForm, 'password', false),
            })
            phoneStep = 'send'
            phoneForm.reset()
            show(passwordField, false)
            phoneSubmit.textContent = 'Send a code'
            await page.refresh()
            page.say('Phone number added.')
          }
        },
        { 50037: 'code' },
      )
    })

    return { element: section, render }
  },
}
