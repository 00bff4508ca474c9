// suite: one pass (the binary runs on its own SQLite database whichever pass runs it: scripts/test-both.ts)
// The compiled binary as a self-hoster runs it: built by scripts/build.ts (`bun run build`) into a temp folder,
// started there with its own database and BASE_URL on localhost, and driven through the same Chromium flows as the
// server from source (flows.ts) and the operator console's (console-flow.ts). The binary's pages load their scripts
// from the paths the embedded bundle names. Voice too: the player's flow joins a lobby's call (a fake microphone).
import { FAKE_MEDIA, useBrowser } from './browser'
import { consoleFlows } from './console-flow'
import { webFlows } from './flows'
import { binaryTarget } from './target'

const web = await useBrowser(FAKE_MEDIA, () => binaryTarget())
webFlows(web)
consoleFlows(web)
