// Every domain, bottom floor first (docs/DESIGN.md): app.ts mounts them in this order (routes, READY contributions),
// server.ts starts them in this order and stops them in the reverse one.
import { accountsModule } from './accounts/module'
import { adminModule } from './admin/module'
import { authModule } from './auth/module'
import { commandsModule } from './commands/module'
import { dmsModule } from './dms/module'
import type { DomainModule } from './domain'
import { experimentsModule } from './experiments/module'
import { guildsModule } from './guilds/module'
import { installsModule } from './installs/module'
import { lobbiesModule } from './lobbies/module'
import { mfaModule } from './mfa/module'
import { oauth2Module } from './oauth2/module'
import { provisionalModule } from './provisional/module'
import { relationshipsModule } from './relationships/module'
import { remoteAuthModule } from './remote-auth/module'
import { usernamesModule } from './usernames/module'
import { voiceModule } from './voice/module'
import { webModule } from './web/module'

export const modules: readonly DomainModule[] = [
  accountsModule,
  usernamesModule,
  oauth2Module,
  guildsModule,
  relationshipsModule,
  authModule,
  mfaModule,
  lobbiesModule,
  experimentsModule,
  commandsModule,
  installsModule,
  voiceModule,
  remoteAuthModule,
  provisionalModule,
  dmsModule,
  adminModule,
  webModule,
]
