// What OAuth2's bot scope needs from the guild model: the guilds a user may add a bot to, adding it, the guild the
// token answer names. oauth2/ and guilds/ stand on one floor and never import each other: installs/module.ts fills
// this port with guilds/public.ts's guildsForInstalls.
import { appState } from '../core/app'

/** A guild the user may add a bot to, with the user's permissions there (the consent page's choice). */
export type InstallGuild = { id: string; name: string; icon: null; owner: boolean; permissions: string }

export type InstallPort = {
  /** The guilds where the user may add a bot (MANAGE_GUILD), with the user's permissions in each. */
  guildsFor(userId: string): Promise<InstallGuild[]>
  /**
   * Add the bot with a managed role holding `permissions` (its role takes them when it is already there); Discord's
   * errors when the user may not (unknown guild, MANAGE_GUILD, a permission the user lacks, the bot banned).
   */
  addBot(input: {
    guildId: string
    userId: string
    botUserId: string
    botName: string
    permissions: bigint
  }): Promise<void>
  /** The guild object, for the token answer of a code issued with the bot (undefined: the guild is gone). */
  guild(guildId: string): Promise<unknown>
}

const newInstallPort = () => ({ port: undefined as InstallPort | undefined })
declare module '../core/app' {
  interface AppState {
    installPort: ReturnType<typeof newInstallPort>
  }
}
const held = appState('installPort', newInstallPort)

export function setInstallPort(next: InstallPort | undefined): void {
  held().port = next
}

/** The port; a server built without the installs module cannot add bots (never the case in app.ts). */
export function installPort(): InstallPort {
  const port = held().port
  if (!port) throw new Error('oauth2: no install port (the installs module is not mounted)')
  return port
}
