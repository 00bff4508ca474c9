// qrcode's browser build, imported by path: `bun build --compile` does not apply the package's "browser" field to
// HTML bundles (it would pull in the Node renderer and its `fs`), Bun.build does. Same API as the package's types.
declare module 'qrcode/lib/browser.js' {
  export { toString, toCanvas, toDataURL, create } from 'qrcode'
}
