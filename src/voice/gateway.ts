// What the voice domain tells the Gateway: op 17 (lobby voice states), our ops 100 (SDP answer) and 101 (ICE
// candidate), and the end of a session (voice/module.ts hands them over). With several nodes each goes to the node of
// the call (placement.ts), and that node's messages about its calls come back here.
import { appState } from '../core/app'
import { log } from '../core/log'
import type { CloseHook, GatewayConnection, OpHandler } from '../gateway/bus'
import { nodeRouting, type NodeMessageHandler } from '../gateway/nodes'
import { addCandidate, applyAnswer, endSessionCalls, setVoiceStates } from './calls'
import { handleVoiceMessage, routeSessionEnd, routeSignal, routeStates, type VoiceMessage } from './placement'
import { parseAnswer, parseCandidate, parseStates, VoiceOp } from './protocol'

/** What this module holds per App (core/app.ts). */
const newVoiceGateway = () => ({
  /**
   * The Gateway runs each frame's handler as it arrives, concurrently; a session's voice frames run one after the
   * other here, so an answer is applied before the candidates sent after it and op 17s do not interleave.
   */
  queues: new Map<string, Promise<void>>(),
})
declare module '../core/app' {
  interface AppState {
    voiceGateway: ReturnType<typeof newVoiceGateway>
  }
}
const held = appState('voiceGateway', newVoiceGateway)

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
    if (!states) return
    const r = nodeRouting()
    return inOrder(connection.sessionId, () =>
      r ? routeStates(r, connection, states) : setVoiceStates(connection, states),
    )
  },
  [VoiceOp.LobbyVoiceAnswer]: (connection: GatewayConnection, data: unknown) => {
    const answer = parseAnswer(data)
    if (!answer) return
    const r = nodeRouting()
    return inOrder(connection.sessionId, () =>
      r ? routeSignal(r, connection.sessionId, { answer }) : applyAnswer(connection.sessionId, answer),
    )
  },
  [VoiceOp.LobbyVoiceCandidate]: (connection: GatewayConnection, data: unknown) => {
    const candidate = parseCandidate(data)
    if (!candidate) return
    const r = nodeRouting()
    return inOrder(connection.sessionId, () =>
      r ? routeSignal(r, connection.sessionId, { candidate }) : addCandidate(connection.sessionId, candidate),
    )
  },
}

/** The session's calls end with it; not when it moved to another node (several nodes), where it goes on. */
export const voiceSessionEnd: CloseHook = (connection) => {
  if (connection.moved) return
  const r = nodeRouting()
  return inOrder(connection.sessionId, async () => {
    await endSessionCalls(connection.sessionId)
    if (r) await routeSessionEnd(r, connection.sessionId)
  })
}

/** Another node's message about a call this node holds: after the session's ops already under way here. */
export const voiceNodeMessage: NodeMessageHandler = (m: VoiceMessage) =>
  'sessionId' in m ? inOrder(m.sessionId, () => handleVoiceMessage(m)) : handleVoiceMessage(m)
