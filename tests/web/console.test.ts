// The operator console in Chromium, from source (the flows: console-flow.ts; the binary runs them in binary.test.ts).
import { useBrowser } from './browser'
import { consoleFlows } from './console-flow'

consoleFlows(await useBrowser())
