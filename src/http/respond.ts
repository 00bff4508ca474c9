// Small response helpers shared by every domain.

/** 204: no body and no JSON content type. */
export function noContent(): Response {
  return new Response(null, { status: 204 })
}

/** A JSON body with a given status (e.g. 201 for creations). */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': JSON_TYPE, ...headers } })
}

/**
 * The content type of every JSON answer, exactly as Discord sends it: discord.py compares the header with `==` and
 * reads any other value (`application/json;charset=utf-8`, Bun's default) as text. JSON is UTF-8 by definition.
 */
export const JSON_TYPE = 'application/json'

/**
 * The `Via` header of every answer. Discord's answers pass Google's front end and say `Via: 1.1 google`; discord.py
 * reads a 429 without a `Via` as a Cloudflare ban and gives up instead of waiting `retry_after`.
 */
export const VIA = '1.1 google'

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
