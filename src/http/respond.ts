// Small response helpers shared by every domain.

/** 204: no body and no JSON content type. */
export function noContent(): Response {
  return new Response(null, { status: 204 })
}

/** A JSON body with a given status (e.g. 201 for creations). */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })
}

/** The content type Elysia gives JSON answers (the lane's answers carry the same). */
export const JSON_TYPE = 'application/json;charset=utf-8'

/** An answer already written as JSON text (a cached answer, a creation's 201): lane handlers return it (http/lane.ts). */
export class JsonText {
  constructor(
    readonly text: string,
    readonly status = 200,
  ) {}
}

/** JSON text as a Response, for an Elysia route. */
export function jsonText(text: string, status = 200): Response {
  return new Response(text, { status, headers: { 'content-type': JSON_TYPE } })
}
