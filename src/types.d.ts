declare module '*.sql' {
  const text: string
  export default text
}
declare module '*.html' {
  const path: string
  export default path
}
declare module '*.css' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string
  export default path
}
declare module '*.csv' {
  const text: string
  export default text
}
