// The operator console's API as the app mounts it (domain.ts): its routes only; its pages are the web client's
// (web/pages/console.html at /console), its operators granted by the CLI (cli.ts `operator grant`).
import type { DomainModule } from '../domain'
import { consoleEndpoints } from './console-routes'
import { adminEndpoints } from './routes'

export const adminModule = {
  name: 'admin',
  endpoints: [...adminEndpoints, ...consoleEndpoints],
} satisfies DomainModule
