// The browser side of the registry: each factor's settings section (its page.ts). The settings page shows them in the
// order of FACTORS (index.ts), which web/ puts in every page; a factor listed in one and not the other has no section.
// A factor is its folder, its line in FACTORS and its line here (docs/DESIGN.md, "Adding a second factor").
import type { FactorPage } from '../factor-page'
import { backupPage } from './backup/page'
import { smsPage } from './sms/page'
import { totpPage } from './totp/page'
import { webauthnPage } from './webauthn/page'

export const FACTOR_PAGES: readonly FactorPage[] = [webauthnPage, totpPage, smsPage, backupPage]
