// Errors a page finds itself, in the shape the server's would have (so they land beside their field the same way).
import { ApiError } from '../../../../client/src/index'

/** A 50035 naming one field, as the server's form errors do. */
export function fieldError(field: string, code: string, message: string): ApiError {
  const body = { code: 50035, message: 'Invalid Form Body', errors: { [field]: { _errors: [{ code, message }] } } }
  return new ApiError(400, 50035, 'Invalid Form Body', body)
}

/**
 * What a form's own checks found, every field at once (UX-T4 finding 1: not one per round trip), as one 50035; null
 * when nothing is wrong. Each entry: field name → message (its code BASE_TYPE_REQUIRED, or the one given).
 */
export function formErrors(
  found: Record<string, string | [code: string, message: string] | undefined>,
): ApiError | null {
  const errors: Record<string, { _errors: { code: string; message: string }[] }> = {}
  for (const [field, entry] of Object.entries(found)) {
    if (!entry) continue
    const [code, message] = typeof entry === 'string' ? ['BASE_TYPE_REQUIRED', entry] : entry
    errors[field] = { _errors: [{ code, message }] }
  }
  if (!Object.keys(errors).length) return null
  return new ApiError(400, 50035, 'Invalid Form Body', { code: 50035, message: 'Invalid Form Body', errors })
}
