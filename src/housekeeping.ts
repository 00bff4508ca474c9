// Periodic clean-up of rows that only expire: one-time tokens, MFA tickets, idle sessions, rate-limit counters.
import { purgeExpiredFingerprints } from './accounts/fingerprints'
import { purgeExpiredOneTime } from './accounts/one-time'
import { sweepIdleSessions } from './accounts/sessions'
import { log } from './core/log'
import { sweep } from './core/ratelimit'
import { purgeExpiredTickets } from './mfa/tickets'

const EVERY_MS = 10 * 60_000
let timer: Timer | undefined

export async function runHousekeeping(): Promise<void> {
  try {
    purgeExpiredOneTime()
    purgeExpiredTickets()
    purgeExpiredFingerprints()
    await sweepIdleSessions()
    sweep()
  } catch (error) {
    log.error('housekeeping failed', { error: String(error) })
  }
}

export function startHousekeeping(): void {
  timer ??= setInterval(runHousekeeping, EVERY_MS)
  timer.unref?.()
}

export function stopHousekeeping(): void {
  clearInterval(timer)
  timer = undefined
}
