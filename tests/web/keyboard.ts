// Keyboard walks: Tab through a page from its start and record what takes the focus, in order, whether it is on the
// screen and whether its focus is visible (a focus ring: an outline or a box shadow); and every control a person can
// act on (links, buttons, fields), to check that Tab reaches each one.
import { expect } from 'bun:test'
import type { Page } from 'playwright-core'

export type Stop = { name: string; visible: boolean; ring: boolean }

/** What the page says a control is: its label, else its text (the accessible name a screen reader reads, roughly). */
const DESCRIBE = `(el) => {
  const label = el.getAttribute('aria-label') || (el.labels && el.labels[0] && el.labels[0].textContent)
    || el.getAttribute('placeholder') || el.textContent || el.getAttribute('name') || el.tagName
  return label.replace(/\\s+/g, ' ').trim().slice(0, 60)
}`

const FOCUSED = `(() => {
  const el = document.activeElement
  if (!el || el === document.body) return null
  const style = getComputedStyle(el)
  const rect = el.getBoundingClientRect()
  const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 1) || style.boxShadow !== 'none'
  const visible = rect.width > 0 && rect.height > 0 && rect.bottom > 0 && rect.top < innerHeight && rect.right > 0 &&
    rect.left < innerWidth
  return { name: (${DESCRIBE})(el), visible, ring }
})()`

const CONTROLS = `(() => [...document.querySelectorAll(
  'a[href], button:not([disabled]), input:not([type=hidden]):not([disabled]), textarea:not([disabled]), select:not([disabled]), [tabindex]:not([tabindex="-1"])'
)].filter((el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden')
  .map((el) => (${DESCRIBE})(el)))()`

/**
 * Tab from the top of the page (focus first put on the document) until the focus leaves the page or comes back to
 * where it started; at most `max` stops. Every stop must be on the screen with a visible focus ring.
 */
export async function tabWalk(page: Page, max = 40): Promise<string[]> {
  // A click on the page's empty top corner: the focus leaves any field and Tab starts from the top.
  await page.evaluate('window.scrollTo(0, 0)')
  await page.mouse.click(1, 1)
  const stops: Stop[] = []
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab')
    const stop = (await page.evaluate(FOCUSED)) as Stop | null
    if (!stop || (stops.length && stop.name === stops[0]!.name)) break
    stops.push(stop)
  }
  expect(stops.filter((s) => !s.visible || !s.ring)).toEqual([])
  return stops.map((s) => s.name)
}

/** Every control on the page that a person can act on, by name. */
export async function controls(page: Page): Promise<string[]> {
  return (await page.evaluate(CONTROLS)) as string[]
}

/** The walk reaches every control on the page, and in this order. */
export async function expectKeyboardWalk(page: Page, order: (string | RegExp)[]): Promise<void> {
  const walked = await tabWalk(page)
  expect(walked).toEqual(order.map((o) => (typeof o === 'string' ? o : expect.stringMatching(o))))
  for (const control of await controls(page)) expect(walked).toContain(control)
}
