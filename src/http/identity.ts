// Caller identity for routes: `{ auth: 'user' }`, `{ auth: ['bot', 'bearer'] }`, `{ auth: { kinds, scope } }`.
// Resolves `caller` into the handler's context or answers Discord's 401/403.
import { Elysia } from 'elysia'
import { resolveAuthorization, type Caller, type CallerKind, type UserCaller } from '../core/caller'
import { Errors } from '../core/errors'
import { callerAfterLimit, LOOKED, type Looked } from './rate-limits'

export type AuthRule = true | CallerKind | CallerKind[] | { kinds: CallerKind[]; scope?: string }

function normalize(rule: AuthRule): { kinds: CallerKind[]; scope?: string } {
  if (rule === true) return { kinds: ['user', 'bot', 'bearer'] }
  if (typeof rule === 'string') return { kinds: [rule] }
  if (Array.isArray(rule)) return { kinds: rule }
  return rule
}

/** Check a resolved caller against a rule; throws the Discord error a client would get. */
export function authorize(caller: Caller | undefined, rule: AuthRule): Caller {
  const { kinds, scope } = normalize(rule)
  if (!caller) throw Errors.unauthorized()
  if (!kinds.includes(caller.kind)) {
    if (caller.kind === 'user' && kinds.includes('bot')) throw Errors.botsOnly()
    if (caller.kind === 'bot' && kinds.includes('user')) throw Errors.botsForbidden()
    throw Errors.unauthorized()
  }
  if (scope && caller.kind === 'bearer' && !caller.scopes.includes(scope)) throw Errors.missingScope()
  return caller
}

/** The caller of a request, if its Authorization resolves (for routes where a token is optional). */
export async function optionalCaller(request: Request): Promise<Caller | undefined> {
  return resolveAuthorization(request.headers.get('authorization'))
}

// Checked in `transform`, which runs before body validation, so a wrong caller gets 401/403 as Discord answers,
// not a form error about a body it may not send at all; kept on Elysia's per-request context for `resolve`. The
// per-route rate limit ran first and left what it learnt of the Authorization (LOOKED): an unknown token is not looked
// up a second time.
const CALLER = '__caller'
type Context = { request: Request; [CALLER]?: Caller; [LOOKED]?: Looked }

/** The API document's security requirement for a rule (scheme names of http/docs.ts; a bearer lists its scope). */
function security(rule: AuthRule) {
  const { kinds, scope } = normalize(rule)
  const names = { user: 'UserToken', bot: 'BotToken', bearer: 'OAuth2Bearer' } as const
  return kinds.map((kind) => ({ [names[kind]]: kind === 'bearer' && scope ? [scope] : [] }))
}

// Written with the context destructured, never passed whole: Elysia reads a hook's source to decide what to prepare
// per request, and a context handed to a function makes it parse headers, query and cookies for every request.
function guard(rule: AuthRule) {
  const check = async (request: Request, looked: Looked) => authorize(await callerAfterLimit(request, looked), rule)
  const transform = async (ctx: Context) => {
    const { request } = ctx
    ctx[CALLER] ??= await check(request, ctx[LOOKED])
  }
  return { transform, check }
}

const userOnly = guard('user')

/**
 * `{ auth: rule }`: the callers a route accepts, resolved into `caller` (a Caller). `{ user: true }`: a user session
 * only, and `caller` is typed UserCaller. (Elysia types a macro's context by the macro, not by the value given to it,
 * so the narrowing for user routes is a macro of its own.)
 */
export const identity = new Elysia({ name: 'identity' }).macro({
  auth: (rule: AuthRule) => {
    const { transform, check } = guard(rule)
    return {
      detail: { security: security(rule) },
      transform,
      resolve: async (ctx: Context) => {
        const { request } = ctx
        return { caller: (ctx[CALLER] ??= await check(request, ctx[LOOKED])) }
      },
    }
  },
  user: {
    detail: { security: security('user') },
    transform: userOnly.transform,
    async resolve(ctx: Context): Promise<{ caller: UserCaller }> {
      const { request } = ctx
      const caller = (ctx[CALLER] ??= await userOnly.check(request, ctx[LOOKED]))
      if (caller.kind !== 'user') throw Errors.unauthorized()
      return { caller }
    },
  },
})
