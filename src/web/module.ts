// The web client as the app mounts it (domain.ts): its pages and assets at the root, after the API, and the HTML
// 404 a browser gets for a path no route knows (the API keeps Discord's JSON 404); the pages' POST bodies unread.
import type { DomainModule } from '../domain'
import { setNotFoundPage } from '../http/basics'
import { leaveBodiesUnread } from '../http/body'
import { notFoundPage, PAGE_ROUTES, webRoutes } from './routes'

export const webModule = {
  name: 'web',
  root: [webRoutes],
  install() {
    setNotFoundPage(notFoundPage)
    // A page's form posted without its script: answered without its body ever being read (routes.ts).
    leaveBodiesUnread(PAGE_ROUTES.map(([path]) => path))
  },
} satisfies DomainModule
