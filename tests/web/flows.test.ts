// The key browser flows (flows.ts) on the server from source; binary.test.ts runs the same ones on the compiled binary.
import { useBrowser } from './browser'
import { webFlows } from './flows'

webFlows(await useBrowser())
