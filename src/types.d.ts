declare module '*.sql' {
  const text: string
  export default text
}
declare module '*.html' {
  const path: string
  export default path
}
