// What every console route shares: its tag, its caller kind, its limits (5 actions, 20 reads a second per operator)
// and the operator behind a request once every check passed (access.ts).
import type { UserCaller } from '../core/caller'
import { clientIp } from '../http/client-ip'
import { requireConsole } from './access'
import type { Actor } from './audit'

export const tag = 'admin'
export const auth = 'user' as const
export const READ = { limit: 20, windowMs: 1000 }
export const ACT = { limit: 5, windowMs: 1000 }

export type Req = { caller: UserCaller; request: Request; server: Parameters<typeof clientIp>[1] }

/** The operator behind a console request, once it passed every check. */
export async function operator({ caller, request, server }: Req): Promise<Actor> {
  await requireConsole(caller, request)
  return { kind: 'operator', userId: caller.userId, address: clientIp(request, server) }
}
