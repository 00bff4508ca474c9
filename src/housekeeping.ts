// Periodic clean-up: every domain's sweep (rows that only expire: one-time tokens, MFA tickets, idle sessions,
// fingerprints), the rate-limit counters and the query planner's statistics, every 10 minutes. With several nodes
// the database's part runs on one node at a time (core/turns.ts); each node sweeps its own counters.
import { appState } from './core/app'
import { log } from './core/log'
import { myTurn } from './core/turns'
import { sweep as sweepRateLimits } from './core/ratelimit'
import { optimizeDatabase } from './db/client'
import { modules } from './modules'

const EVERY_MS = 10 * 60_000
/** What this module holds per App (core/app.ts). */
const newHousekeeping = () => ({
  timer: undefined as Timer | undefined,
})
declare module './core/app' {
  interface AppState {
    housekeeping: ReturnType<typeof newHousekeeping>
  }
}
const held = appState('housekeeping', newHousekeeping)

export async function runHousekeeping(): Promise<void> {
  // This process's own counters, on every node.
  sweepRateLimits()
  // The database's clean-up: with several nodes, on one node at a time.
  if (!(await myTurn('housekeeping', EVERY_MS))) return
  for (const m of modules) {
    try {
      await m.sweep?.()
    } catch (error) {
      log.error('housekeeping failed', { domain: m.name, error: String(error) })
    }
  }
  try {
    await optimizeDatabase()
  } catch (error) {
    log.error('housekeeping failed', { domain: 'db', error: String(error) })
  }
}

export function startHousekeeping(): void {
  const st = held()
  st.timer ??= setInterval(runHousekeeping, EVERY_MS)
  st.timer.unref?.()
}

export function stopHousekeeping(): void {
  const st = held()
  clearInterval(st.timer)
  st.timer = undefined
}
