// What the voice domain tells the Gateway: op 17 (lobby voice states), our ops 100 (SDP answer) and 101 (ICE
// candidate), and the end of a session (voice/module.ts hands them over).
import { perApp } from '../core/app-context'
import { log } from '../core/log'
import type { CloseHook, GatewayConnection, OpHandler } from '../gateway/bus'
import { addCandidate, applyAnswer, endSessionCalls, setVoiceStates } from './calls'
import { parseAnswer, parseCandidate, parseStates, VoiceOp } from './protocol'

/** What this module holds per service (core/app-context.ts). */
const held = perApp(() => ({
  /**
   * The Gateway runs each frame's handler as it arrives, concurrently; a session's voice frames run one after the
   * other here, so an answer is applied before the candidates sent after it and op 17s do not interleave.
   */
  queues: new Map<string, Promise<void>>(),
}))

function inOrder(sessionId: string, work: () => Promise<void>): Promise<void> {
  const st = held()
  // A failure here is the server's, not the client's: logged, and the Gateway connection stays up.
  const next = (st.queues.get(sessionId) ?? Promise.resolve())
    .then(work)
    .catch((error) => log.error('voice op failed', { error: String(error) }))
  st.queues.set(sessionId, next)
  void next.then(() => {
    if (st.queues.get(sessionId) === next) st.queues.delete(sessionId)
  })
  return next
}

export const voiceOpcodes: Record<number, OpHandler> = {
  [VoiceOp.LobbyVoiceStates]: (connection: GatewayConnection, data: unknown) => {
    const states = parseStates(data)
    if (states) return inOrder(connection.sessionId, () => setVoiceStates(connection, states))
  },
  [VoiceOp.LobbyVoiceAnswer]: (connection: GatewayConnection, data: unknown) => {
    const answer = parseAnswer(data)
    if (answer) return inOrder(connection.sessionId, () => applyAnswer(connection, answer))
  },
  [VoiceOp.LobbyVoiceCandidate]: (connection: GatewayConnection, data: unknown) => {
    const candidate = parseCandidate(data)
    if (candidate) return inOrder(connection.sessionId, () => addCandidate(connection, candidate))
  },
}

export const voiceSessionEnd: CloseHook = (connection) =>
  inOrder(connection.sessionId, () => endSessionCalls(connection.sessionId))
