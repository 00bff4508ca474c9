// Elevation as the domains above ask for it (remote-auth): the running registry's check (registry.ts requireElevation).
import type { UserCaller } from '../core/caller'
import { registry } from './factors'

/** Throws 60003 (with a ticket and the methods) unless the request carries a valid elevation for this caller. */
export const requireElevation = (caller: UserCaller, request: Request): Promise<void> =>
  registry.requireElevation(caller, request)
