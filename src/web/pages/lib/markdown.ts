// Chat markdown as Discord renders the common part of it (UX-T4 finding 21): **bold**, *italic* / _italic_,
// __underline__, ~~strike~~, `code`, ```code blocks```, "> " quotes and http(s) links. Built from text nodes and
// elements only: no HTML from a message is ever parsed, so `<script>` stays text.
import { el } from './ui'

const INLINE =
  /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(__[^_\n]+__)|(~~[^~\n]+~~)|(\*[^*\s][^*\n]*\*)|(_[^_\s][^_\n]*_)|(https?:\/\/[^\s<>"']+[^\s<>"'.,;:!?)\]])/g

function inline(text: string): Node[] {
  const out: Node[] = []
  let at = 0
  for (const match of text.matchAll(INLINE)) {
    const i = match.index ?? 0
    if (i > at) out.push(document.createTextNode(text.slice(at, i)))
    const [whole, code, bold, under, strike, star, underscore, url] = match
    if (code) out.push(el('code', {}, code.slice(1, -1)))
    else if (bold) out.push(el('strong', {}, ...inline(bold.slice(2, -2))))
    else if (under) out.push(el('u', {}, ...inline(under.slice(2, -2))))
    else if (strike) out.push(el('s', {}, ...inline(strike.slice(2, -2))))
    else if (star || underscore) out.push(el('em', {}, ...inline(whole.slice(1, -1))))
    else if (url) out.push(link(url))
    at = i + whole.length
  }
  if (at < text.length) out.push(document.createTextNode(text.slice(at)))
  return out
}

function link(url: string): Node {
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return document.createTextNode(url)
    return el('a', { href: parsed.href, target: '_blank', rel: 'noopener noreferrer nofollow ugc' }, url)
  } catch {
    return document.createTextNode(url)
  }
}

/** A message's content as nodes: code blocks kept verbatim, quote lines, inline markdown elsewhere. */
export function renderMarkdown(content: string): Node[] {
  const out: Node[] = []
  const parts = content.split(/```(?:[a-z0-9+-]*\n)?([\s\S]*?)```/i)
  parts.forEach((part, index) => {
    if (index % 2 === 1) {
      out.push(el('pre', {}, el('code', {}, part)))
      return
    }
    const lines = part.split('\n')
    lines.forEach((line, n) => {
      if (line.startsWith('> ')) out.push(el('blockquote', {}, ...inline(line.slice(2))))
      else {
        out.push(...inline(line))
        if (n < lines.length - 1) out.push(document.createTextNode('\n'))
      }
    })
  })
  return out
}
