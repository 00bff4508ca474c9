// What every page shares that the operator configures (config.ts): the product name and logo in the header and the
// title, the favicon, registration's Terms of Service and Privacy Policy links; and the small pages the server
// answers by itself (no script needed): a page that needs JavaScript, a page that is not there.
import type { Config } from '../config'

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

/** The default favicon: a rounded square with a speech bubble, in the pages' accent colour. */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#4752c4"/>' +
  '<path d="M8 10a3 3 0 0 1 3-3h10a3 3 0 0 1 3 3v7a3 3 0 0 1-3 3h-6l-5 4v-4a3 3 0 0 1-2-3z" fill="#fff"/></svg>'

function brand(cfg: Config): string {
  const logo = cfg.logoUrl ? `<img class="logo" src="${escapeHtml(cfg.logoUrl)}" alt="" width="28" height="28">` : ''
  return `${logo}<span class="brand-name">${escapeHtml(cfg.productName)}</span>`
}

function link(url: string | undefined, label: string): string {
  return url ? `<a href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer">${label}</a>` : label
}

/**
 * A page's HTML as built (pages/*.html) with the operator's settings in: the header's brand (the pages say
 * "Lobby server"), the title's suffix, the favicon, and the Terms and Privacy links (`data-link` spans).
 */
export function brandPage(html: string, cfg: Config): string {
  const icon = cfg.logoUrl ?? '/favicon.svg'
  return html
    .replace(/(<a class="brand" href="[^"]*">)Lobby server(<\/a>)/g, (_, open, close) => `${open}${brand(cfg)}${close}`)
    .replace(/<title>([^<]*)<\/title>/, (_, title) => `<title>${title} · ${escapeHtml(cfg.productName)}</title>`)
    .replace('</head>', `<link rel="icon" href="${escapeHtml(icon)}"></head>`)
    .replace(/<span data-link="terms">([^<]*)<\/span>/g, (_, label) => link(cfg.termsUrl, label))
    .replace(/<span data-link="privacy">([^<]*)<\/span>/g, (_, label) => link(cfg.privacyUrl, label))
}

/** Said first on every page when scripts do not run (the forms do nothing without them). */
const NOSCRIPT =
  '<noscript><div class="card"><h1>This page needs JavaScript</h1><p class="lead">Turn JavaScript on for this site, ' +
  'then reload the page. Nothing you type here is sent without it.</p></div></noscript>'

/** A page of the web client (pages/*.html): branded, and saying so when its script cannot run. */
export function clientPage(html: string, cfg: Config): string {
  return brandPage(html, cfg).replace('<main>', `<main>${NOSCRIPT}`)
}

/** The stylesheet a built page links (the same one for every page), to reuse on the server's own pages. */
export function stylesheetOf(html: string): string {
  return /<link rel="stylesheet"[^>]*>/.exec(html)?.[0] ?? ''
}

export type Message = { title: string; heading: string; text: string; link: { href: string; label: string } }

/** A page of the server's own: a heading, a sentence and a way on; no script. */
export function messagePage(cfg: Config, stylesheet: string, message: Message): string {
  return brandPage(
    `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(message.title)}</title>
  ${stylesheet}
</head>
<body>
  <header class="site"><a class="brand" href="/login">Lobby server</a></header>
  <main>
    <div class="card">
      <h1>${escapeHtml(message.heading)}</h1>
      <p class="lead">${escapeHtml(message.text)}</p>
      <div class="actions"><a class="button" href="${escapeHtml(message.link.href)}">${escapeHtml(message.link.label)}</a></div>
    </div>
  </main>
</body>
</html>
`,
    cfg,
  )
}
