// Pages opened from a mailed link that act at once: take the token from the fragment, call the API, say what happened.
import { ApiError } from './client'
import { $, fieldMessages, forgetLinkToken, show, takeLinkToken } from './ui'

export type LinkOutcome = { title: string; message: string; next?: { href: string; label: string } }

/**
 * `explain`: what a page can say of a failed link beyond the server's words (a used link whose work is already done);
 * undefined leaves the default.
 */
export async function runLinkPage(
  page: string,
  act: (token: string) => Promise<LinkOutcome>,
  failedTitle: string,
  explain?: (failure: unknown) => Promise<(LinkOutcome & { action?: HTMLElement }) | undefined>,
): Promise<void> {
  const token = takeLinkToken(page)
  const title = $('#title')
  const error = $('#error')
  const next = (href: string, label: string) => {
    const link = $<HTMLAnchorElement>('#next-link')
    link.href = href
    link.textContent = label
    show($('#next'))
  }
  if (!token) {
    title.textContent = failedTitle
    error.textContent = 'This link is incomplete. Open the whole link from the e-mail again.'
    return next('/login', 'Go to login')
  }
  try {
    const outcome = await act(token)
    forgetLinkToken(page)
    title.textContent = outcome.title
    $('#message').textContent = outcome.message
    if (outcome.next) next(outcome.next.href, outcome.next.label)
  } catch (failure) {
    if (failure instanceof ApiError && failure.status === 400) forgetLinkToken(page)
    const explained = await explain?.(failure).catch(() => undefined)
    if (explained) {
      title.textContent = explained.title
      $('#message').textContent = explained.message
      if (explained.action) $('#message').after(explained.action)
      if (explained.next) next(explained.next.href, explained.next.label)
      return
    }
    title.textContent = failedTitle
    const messages = fieldMessages(failure)
    error.textContent = messages.length
      ? `${messages.join(' ')} The link may have expired or been used already.`
      : failure instanceof Error
        ? failure.message
        : String(failure)
    if (failure instanceof ApiError && failure.status === 400) forgetLinkToken(page)
    next('/login', 'Go to login')
  }
}
