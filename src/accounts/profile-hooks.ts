// Who wants to know that a user's public profile changed (PATCH /users/@me's display name): the people who see the
// user (its friends, its lobby-mates) are told by the domains that know them, installed at start-up (app.ts), so
// accounts and auth import none of them. Called inside the change's transaction: what they publish goes out with it.
import { appState } from '../core/app'

type Listener = (userId: string) => Promise<void>

/** What this module holds per App (core/app.ts). */
const newProfileHooks = () => ({ listeners: [] as Listener[] })
declare module '../core/app' {
  interface AppState {
    profileHooks: ReturnType<typeof newProfileHooks>
  }
}
const held = appState('profileHooks', newProfileHooks)

export function onProfileChange(listener: Listener): void {
  const st = held()
  if (!st.listeners.includes(listener)) st.listeners.push(listener)
}

export async function profileChanged(userId: string): Promise<void> {
  for (const listener of held().listeners) await listener(userId)
}
