// Types of raw REST calls: a concrete path (`/lobbies/${id}/messages`, a literal or a template-literal type) is
// matched against the route templates of api.gen.ts segment by segment (a `{param}` takes any one segment), the most
// specific first, so `/users/@me` is its own route and `/users/${id}` is `/users/{userId}`.
import type { Api, RouteOrder } from './api.gen'

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete'

type Split<S extends string> = S extends `${infer Head}/${infer Tail}` ? [Head, ...Split<Tail>] : [S]
type WithoutQuery<P extends string> = P extends `${infer Path}?${string}` ? Path : P

type SegmentsMatch<P extends string[], T extends string[]> = P extends [
  infer P0 extends string,
  ...infer PRest extends string[],
]
  ? T extends [infer T0 extends string, ...infer TRest extends string[]]
    ? T0 extends `{${string}}`
      ? SegmentsMatch<PRest, TRest>
      : P0 extends T0
        ? SegmentsMatch<PRest, TRest>
        : false
    : false
  : T extends []
    ? true
    : false

type Find<M extends Method, Segments extends string[], Order extends unknown[]> = Order extends [
  infer K extends string,
  ...infer Rest,
]
  ? K extends keyof Api
    ? M extends keyof Api[K]
      ? SegmentsMatch<Segments, Split<K>> extends true
        ? K
        : Find<M, Segments, Rest>
      : Find<M, Segments, Rest>
    : Find<M, Segments, Rest>
  : never

/** The route template of `M P` (never when no route matches). */
export type RouteOf<M extends Method, P extends string> = Find<M, Split<WithoutQuery<P>>, RouteOrder>

type Declared<M extends Method, P extends string, Part extends 'body' | 'query' | 'response'> =
  RouteOf<M, P> extends infer K extends keyof Api
    ? M extends keyof Api[K]
      ? Api[K][M] extends { [X in Part]: infer T }
        ? T
        : unknown
      : unknown
    : unknown

export type RouteBody<M extends Method, P extends string> = Declared<M, P, 'body'>
export type RouteQuery<M extends Method, P extends string> = Declared<M, P, 'query'>
export type RouteResponse<M extends Method, P extends string> = Declared<M, P, 'response'>
