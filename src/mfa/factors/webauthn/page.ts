// Security keys and passkeys on the settings page: the list (rename, remove: elevated), and adding one (a registration
// ceremony on a ticket). On an address where WebAuthn cannot work (an IP) it says so instead of letting the browser
// fail with its own error.
import { startRegistration } from '@simplewebauthn/browser'
import type { BackupCode, FactorPage } from '../../factor-page'

type Key = { id: string; name: string; type: number }
const CREDENTIALS = '/users/@me/mfa/webauthn/credentials'

export const webauthnPage: FactorPage = {
  type: 'webauthn',
  section(page) {
    const { el, field, show, submitting, value } = page
    let keys: Key[] = []

    const unavailable = el('p', { class: 'notice', id: 'keys-unavailable', role: 'status', hidden: true })
    const list = el('ul', { class: 'rows', id: 'keys' })
    const form = el(
      'form',
      { id: 'key-form', novalidate: true },
      field(
        'Name of the new key',
        el('input', { id: 'key-name', name: 'name', type: 'text', maxlength: 32, required: true }),
      ),
      el('div', { class: 'actions' }, el('button', { type: 'submit' }, 'Add a security key or passkey')),
      el('p', { class: 'form-error', role: 'alert' }),
    )
    const section = page.section('keys', 'Security keys and passkeys', unavailable, list, form)

    const why = page.passkeysUnavailable()
    if (why) {
      unavailable.textContent = why
      show(unavailable)
      for (const control of form.querySelectorAll<HTMLInputElement | HTMLButtonElement>('input, button'))
        control.disabled = true
    }

    async function load() {
      keys = await page.api<Key[]>('GET', CREDENTIALS)
    }

    function render() {
      if (!keys.length) return list.replaceChildren(el('li', { class: 'muted' }, 'No security key or passkey yet.'))
      list.replaceChildren(...keys.map(row))
    }

    /** A key's row: its name (editable) with Rename and Remove. */
    function row(key: Key): HTMLLIElement {
      const name = el('input', {
        type: 'text',
        value: key.name,
        maxlength: 32,
        'aria-label': `Name of ${key.name}`,
        name: 'name',
        id: `key-${key.id}-name`,
      })
      const rename = el('form', { class: 'what', novalidate: true }, el('div', { class: 'field' }, name))
      rename.addEventListener('submit', (event) => {
        event.preventDefault()
        void submitting(rename, async () => {
          const wanted = name.value.trim().toLowerCase()
          if (keys.some((k) => k !== key && k.name.toLowerCase() === wanted))
            throw page.fieldError('name', `You already have a key named ${name.value.trim()}.`)
          const renamed = await page.api<Key>('PATCH', `${CREDENTIALS}/${key.id}`, { name: name.value.trim() })
          key.name = renamed.name
          page.say(`Renamed to ${renamed.name}.`)
        })
      })
      rename.append(
        el(
          'div',
          { class: 'actions' },
          el('button', { type: 'submit', class: 'secondary' }, 'Rename'),
          el('button', { type: 'button', class: 'danger', onclick: () => removeKey(key, rename) }, 'Remove'),
        ),
      )
      return el('li', { 'data-key': key.name }, rename)
    }

    function removeKey(key: Key, row: HTMLElement) {
      void submitting(row, async () => {
        await page.api('DELETE', `${CREDENTIALS}/${key.id}`)
        await load()
        await page.refresh()
        page.say(`${key.name} removed.`)
      })
    }

    form.addEventListener('submit', (event) => {
      event.preventDefault()
      void submitting(form, async () => {
        const name = value(form, 'name')
        if (!name) throw page.fieldError('name', 'Give the key a name.')
        // Two keys of one name cannot be told apart in the list (UX-T4 finding 15).
        if (keys.some((k) => k.name.toLowerCase() === name.toLowerCase()))
          throw page.fieldError('name', `You already have a key named ${name}. Give this one another name.`)
        const { ticket, challenge } = await page.api<{ ticket: string; challenge: string }>('POST', CREDENTIALS)
        const credential = await startRegistration({ optionsJSON: JSON.parse(challenge).publicKey }).catch(
          (error: { code?: string; name?: string }) => {
            // The browser's words for an authenticator that holds one of this account's keys (finding 16).
            if (error?.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED' || error?.name === 'InvalidStateError')
              throw new Error('This device is already one of your security keys or passkeys.')
            throw error
          },
        )
        const created = await page.api<Key & { backup_codes?: BackupCode[] }>('POST', CREDENTIALS, {
          ticket,
          name,
          credential: JSON.stringify(credential),
        })
        form.reset()
        await load()
        await page.refresh()
        if (created.backup_codes) page.backupCodes.show(created.backup_codes, true)
        page.say(`${created.name} added.`)
      })
    })

    return { element: section, load, render }
  },
}
