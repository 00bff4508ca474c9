// Password strength beside a new-password field, from POST /auth/password/validate (the server's own policy).
import { client } from './client'
import { debounce, el } from './ui'

const WORDS = ['Very weak', 'Weak', 'Fair', 'Good', 'Strong']
export const PASSWORD_MIN = 8
export const PASSWORD_MAX = 72

/** Put a strength meter under `input` that follows what is typed. */
export function strengthMeter(input: HTMLInputElement): void {
  const meter = el('meter', {
    // Strength 0–4 shown as 1–5, so "Very weak" is a red sliver rather than an empty grey bar (UX-T4 finding 5).
    min: 0,
    max: 5,
    low: 2,
    high: 4,
    optimum: 5,
    value: 0,
    'aria-label': 'Password strength',
  })
  const words = el('p', { class: 'hint', 'aria-live': 'polite' })
  input.closest('.field')!.append(meter, words)
  let latest = 0
  const check = debounce(async (password: string) => {
    const mine = ++latest
    if (password.length < PASSWORD_MIN)
      return void ((meter.value = 0), (words.textContent = password ? `At least ${PASSWORD_MIN} characters.` : ''))
    if (password.length > PASSWORD_MAX)
      return void ((meter.value = 0), (words.textContent = `At most ${PASSWORD_MAX} characters.`))
    try {
      const r = await client.rest.post('/auth/password/validate', { body: { password }, auth: false })
      if (mine !== latest) return
      meter.value = r.password_strength + 1
      words.textContent = `${WORDS[r.password_strength] ?? ''}${r.valid ? '' : ' — choose a stronger password.'}`
    } catch {
      // The meter is a hint; the form's own answer names any problem.
    }
  })
  input.addEventListener('input', () => check(input.value))
}
