// The pages' files, ready to serve. Each page is a Bun HTML import (pages/*.html with its script and the shared
// stylesheet). Inside the compiled binary Bun has already bundled them: every import carries its `files`, embedded
// under /$bunfs/. From source an import only names its HTML file, so the same shape is built once in memory with
// Bun.build on first use. Scripts and styles are served under /assets/: Bun.build is told so (publicPath), and the
// binary's HTML, which names them at the site root (/chunk-<hash>.js), is rewritten for those exact names. (A route
// for every name at the root would be a Bun route `/:file`, and Bun's router would take the /gateway upgrade too.)
import { basename } from 'node:path'
import authorize from './pages/authorize.html'
import authorizeIp from './pages/authorize-ip.html'
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
} as unknown as Record<string, HtmlBundle>
export type PageName = keyof typeof bundles

export type WebFile = { body: Blob; type: string }
export type Site = { pages: Map<string, WebFile>; assets: Map<string, WebFile> }

const HTML = 'text/html;charset=utf-8'
/** Where the pages' scripts and styles are served. */
export const ASSETS = '/assets/'
let site: Promise<Site> | undefined

/** The pages and their assets (built on first call from source; read from the binary when compiled). */
export function loadSite(): Promise<Site> {
  if (!site) {
    site = Object.values(bundles).every((b) => Array.isArray(b.files)) ? embedded() : buildFromSource()
    // A failed build is not kept: the next request tries again.
    site.catch(() => (site = undefined))
  }
  return site
}

async function embedded(): Promise<Site> {
  const pages = new Map<string, WebFile>()
  const assets = new Map<string, WebFile>()
  for (const [name, bundle] of Object.entries(bundles)) {
    let html = await Bun.file(bundle.index).text()
    for (const file of bundle.files!) {
      if (file.loader === 'html') continue
      const asset = basename(file.path)
      html = html.replaceAll(`="/${asset}"`, `="${ASSETS}${asset}"`)
      assets.set(asset, { body: Bun.file(file.path), type: file.headers?.['content-type'] ?? Bun.file(file.path).type })
    }
    pages.set(name, { body: new Blob([html]), type: HTML })
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
  const pages = new Map<string, WebFile>()
  const assets = new Map<string, WebFile>()
  for (const output of result.outputs) {
    const file = basename(output.path)
    const page = byHtml.get(file)
    if (page && file.endsWith('.html')) pages.set(page, { body: output, type: HTML })
    else assets.set(file, { body: output, type: output.type })
  }
  for (const name of byHtml.values()) if (!pages.has(name)) throw new Error(`web page ${name} missing from the build`)
  return { pages, assets }
}
