// Periodic work that one node of a cluster does at a time (the lobby idle sweep, housekeeping's deletes). One server
// always has the turn; with several nodes the cluster side (cluster/turns.ts) answers by a lease per kind of work,
// held by the node that took it for as long as it keeps asking (a node that died hands it over when its lease ends).
import { appState } from './app'

type TurnPort = (work: string, everyMs: number) => Promise<boolean>

/** What this module holds per App (core/app.ts). */
const newTurns = () => ({ port: undefined as TurnPort | undefined })
declare module './app' {
  interface AppState {
    turns: ReturnType<typeof newTurns>
  }
}
const held = appState('turns', newTurns)

/** Several nodes from now on (undefined: one server again). */
export function useTurns(next: TurnPort | undefined): void {
  held().port = next
}

/** Whether this node does `work` now (asked each time before it runs, every `everyMs`). */
export function myTurn(work: string, everyMs: number): Promise<boolean> | boolean {
  const port = held().port
  return port ? port(work, everyMs) : true
}
