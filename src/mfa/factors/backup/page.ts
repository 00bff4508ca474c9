// Backup codes on the settings page, while MFA is on: viewing them (masked: the codes are shown in clear only when
// made) and generating new ones, both elevated, in the page's backup-codes display.
import type { BackupCode, FactorPage } from '../../factor-page'

export const backupPage: FactorPage = {
  type: 'backup',
  section(page) {
    const { el, show, submitting } = page
    const view = el('button', { type: 'button', class: 'secondary', id: 'backup-view' }, 'View backup codes')
    const regenerate = el('button', { type: 'button', class: 'secondary', id: 'backup-new' }, 'Generate new codes')
    const section = page.section(
      'backup',
      'Backup codes',
      el('p', { class: 'muted' }, 'Each code logs you in once if you lose your authenticator.'),
      el('div', { class: 'actions' }, view, regenerate),
      page.backupCodes.element,
      el('p', { class: 'form-error', id: 'backup-error', role: 'alert' }),
    )

    const codes = (fresh: boolean) =>
      void submitting(section, async () => {
        const { backup_codes } = await page.api<{ backup_codes: BackupCode[] }>(
          'POST',
          '/users/@me/mfa/codes-verification',
          { regenerate: fresh },
        )
        page.backupCodes.show(backup_codes, fresh)
      })
    view.addEventListener('click', () => codes(false))
    regenerate.addEventListener('click', () => codes(true))

    return { element: section, render: () => show(section, page.user().mfa_enabled) }
  },
}
