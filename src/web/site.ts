// The pages' files, ready to serve. Each page is a Bun HTML import (pages/*.html with its script and the shared
// stylesheet). Inside the compiled binary Bun has already bundled them: every import carries its `files`, embedded
// under /$bunfs/root/, and the bundle names each file by its path there, from the site root: the HTML's
// <script src="/chunk-<hash>.js"> and, inside the scripts, `import ... from "/chunk-<hash>.js"` (code splitting).
// Bun offers no public path for these bundles (`--public-path` does not reach them), so each file is served at the
// very path the bundle names (`embeddedPaths()`, known when this module loads, so they are exact routes: no route
// pattern at the root that Bun's router would match for /gateway too). Nothing is rewritten: a rewrite of the HTML
// alone left the scripts importing chunks at paths nobody served (issue 27).
// From source an import only names its HTML file, so the same shape is built once in memory with Bun.build on first
// use, its scripts and styles under /assets/ (publicPath).
import { basename, dirname } from 'node:path'
import authorize from './pages/authorize.html'
import authorizeIp from './pages/authorize-ip.html'
import consolePage from './pages/console/console.html'
import home from './pages/home.html'
import lobby from './pages/lobby.html'
import login from './pages/login.html'
import ra from './pages/ra.html'
import register from './pages/register.html'
import reset from './pages/reset.html'
import security from './pages/security.html'
import verify from './pages/verify.html'
import wasntme from './pages/wasntme.html'

type BundleFile = { path: string; loader: string; headers?: Record<string, string> }
type HtmlBundle = { index: string; files?: BundleFile[] }

const bundles = {
  login,
  register,
  verify,
  'authorize-ip': authorizeIp,
  reset,
  wasntme,
  authorize,
  security,
  ra,
  lobby,
  console: consolePage,
  home,
} as unknown as Record<string, HtmlBundle>
export type PageName = keyof typeof bundles

export type WebFile = { body: Blob; type: string }
/** Pages' HTML by name; scripts and styles by the URL path the pages name them with. */
export type Site = { pages: Map<string, string>; assets: Map<string, WebFile> }

/** Where the pages' scripts and styles are served when built from source. */
export const ASSETS = '/assets/'
let site: Promise<Site> | undefined

const compiled = Object.values(bundles).every((b) => Array.isArray(b.files))

/** The URL path of an embedded file: its path under the bundle's root (`/$bunfs/root/chunk-x.js` → `/chunk-x.js`). */
function urlPath(bundle: HtmlBundle, file: BundleFile): string {
  const root = dirname(bundle.index)
  return file.path.startsWith(`${root}/`) ? file.path.slice(root.length) : `/${basename(file.path)}`
}

/** The paths of the compiled binary's scripts and styles, as its pages name them (none from source). */
export function embeddedPaths(): string[] {
  if (!compiled) return []
  const paths = new Set<string>()
  for (const bundle of Object.values(bundles))
    for (const file of bundle.files!) if (file.loader !== 'html') paths.add(urlPath(bundle, file))
  return [...paths]
}

/** The pages and their assets (built on first call from source; read from the binary when compiled). */
export function loadSite(): Promise<Site> {
  if (!site) {
    site = compiled ? embedded() : buildFromSource()
    // A failed build is not kept: the next request tries again.
    site.catch(() => (site = undefined))
  }
  return site
}

async function embedded(): Promise<Site> {
  const pages = new Map<string, string>()
  const assets = new Map<string, WebFile>()
  for (const [name, bundle] of Object.entries(bundles)) {
    for (const file of bundle.files!) {
      if (file.loader === 'html') continue
      const body = Bun.file(file.path)
      assets.set(urlPath(bundle, file), { body, type: file.headers?.['content-type'] ?? body.type })
    }
    pages.set(name, await Bun.file(bundle.index).text())
  }
  return { pages, assets }
}

async function buildFromSource(): Promise<Site> {
  const entries = Object.entries(bundles)
  const result = await Bun.build({
    entrypoints: entries.map(([, b]) => b.index),
    target: 'browser',
    publicPath: ASSETS,
    minify: true,
    naming: { entry: '[name].[ext]', chunk: 'chunk-[hash].[ext]', asset: 'asset-[hash].[ext]' },
    define: { 'process.env.NODE_ENV': '"production"' },
    throw: false,
  })
  if (!result.success) throw new AggregateError(result.logs, 'building the web pages failed')
  const byHtml = new Map(entries.map(([name, b]) => [basename(b.index), name]))
  const pages = new Map<string, string>()
  const assets = new Map<string, WebFile>()
  for (const output of result.outputs) {
    const file = basename(output.path)
    const page = byHtml.get(file)
    if (page && file.endsWith('.html')) pages.set(page, await output.text())
    else assets.set(`${ASSETS}${file}`, { body: output, type: output.type })
  }
  for (const name of byHtml.values()) if (!pages.has(name)) throw new Error(`web page ${name} missing from the build`)
  return { pages, assets }
}
