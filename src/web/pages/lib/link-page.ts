// Pages opened from a mailed link that act at once: take the token from the fragment, call the API, say what happened.
import { ApiError } from './client'
import { $, fieldMessages, forgetLinkToken, show, takeLinkToken } from './ui'

export type LinkOutcome = { title: string; message: string; next?: { href: string; label: string } }

export async function runLinkPage(
  page: string,
  act: (token: string) => Promise<LinkOutcome>,
  failedTitle: string,
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
