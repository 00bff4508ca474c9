// The registry: every second factor, strongest first (the order of the login answer's fields, of a 60003 answer's
// methods and of the pages' choices). A factor is its folder and its line in FACTORS (docs/DESIGN.md, "Adding a second
// factor").
import type { SecondFactor } from '../factor'
import { createRegistry } from '../registry'
import { backupCodes } from './backup/factor'
import { sms } from './sms/factor'
import { totp } from './totp/factor'
import { webauthn } from './webauthn/factor'

export const FACTORS: readonly SecondFactor[] = [webauthn, totp, sms, backupCodes]

/** The registry the server runs with (module.ts mounts its endpoints and installs its hook). */
export const registry = createRegistry(FACTORS)

/** MFA is on (remote-auth asks before a QR login's finish). */
export const mfaEnabled = async (userId: string): Promise<boolean> => await registry.enabled(userId)
