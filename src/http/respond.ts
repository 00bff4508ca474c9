// Small response helpers shared by every domain.

/** 204: no body and no JSON content type. */
export function noContent(): Response {
  return new Response(null, { status: 204 })
}

/** A JSON body with a given status (e.g. 201 for creations). */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })
}

/** JSON already written as text (a cached answer), with the content type Elysia gives JSON answers. */
export function jsonText(text: string): Response {
  return new Response(text, { headers: { 'content-type': 'application/json;charset=utf-8' } })
}
