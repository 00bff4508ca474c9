// Idle close: a lobby whose idle deadline (a column, so it survives restarts) has passed is deleted with
// LOBBY_DELETE. One periodic sweeper for all lobbies, reading clock.now(), so tests move time and call sweep.
import { appState } from '../core/app'
import { config } from '../config'
import { clock } from '../core/clock'
import { log } from '../core/log'
import { myTurn } from '../core/turns'
import { deleteLobby } from './lifecycle'
import { deleteIfIdle, dueIdleLobbies } from './store'
import { resetVoiceAtStart } from './members-store'

const SWEEP_EVERY_MS = Number(process.env.LOBBY_IDLE_SWEEP_MS) || 1000
const BATCH = 500

/** What this module holds per App (core/app.ts). */
const newLobbyIdle = () => ({
  timer: undefined as ReturnType<typeof setInterval> | undefined,
})
declare module '../core/app' {
  interface AppState {
    lobbyIdle: ReturnType<typeof newLobbyIdle>
  }
}
const held = appState('lobbyIdle', newLobbyIdle)

/** Close every lobby idle past its deadline; returns how many closed. */
export async function sweepIdleLobbies(now = clock.now()): Promise<number> {
  let closed = 0
  for (;;) {
    const due = await dueIdleLobbies(now, BATCH)
    for (const id of due) if (await deleteLobby(id, async () => await deleteIfIdle(id, now))) closed += 1
    if (due.length < BATCH) return closed
  }
}

export async function startLobbySweeper(): Promise<void> {
  const st = held()
  stopLobbySweeper()
  // Sockets do not survive a restart: nobody is connected, so every lobby's countdown runs again. Not with several
  // nodes: the other nodes' members are still connected and in their calls.
  if (!config().redisUrl) await resetVoiceAtStart(clock.now())
  let running = false
  st.timer = setInterval(async () => {
    // One sweep at a time, even if one outlasts the interval; with several nodes, on one node at a time (its delete
    // is guarded anyway: a lobby deleted twice at once is deleted once, one LOBBY_DELETE).
    if (running) return
    running = true
    try {
      if (await myTurn('lobby-idle-sweep', SWEEP_EVERY_MS)) await sweepIdleLobbies()
    } catch (error) {
      log.error('lobby idle sweep failed', { error: String(error) })
    } finally {
      running = false
    }
  }, SWEEP_EVERY_MS)
  st.timer.unref?.()
}

export function stopLobbySweeper(): void {
  const st = held()
  if (st.timer) clearInterval(st.timer)
  st.timer = undefined
}
