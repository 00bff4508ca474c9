// READY's `user`: the private user for user sessions, the bot user (bot: true) for applications.
import type { Caller } from '../core/caller'
import { userForCaller } from './serialize'
import { findUser } from './store'

export async function userReady(caller: Caller) {
  const user = findUser(caller.userId)
  return { ready: { user: user ? userForCaller(user, caller) : null } }
}
