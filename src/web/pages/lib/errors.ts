// Errors a page finds itself, in the shape the server's would have (so they land beside their field the same way).
import { ApiError } from '../../../../client/src/index'

/** A 50035 naming one field, as the server's form errors do. */
export function fieldError(field: string, code: string, message: string): ApiError {
  const body = { code: 50035, message: 'Invalid Form Body', errors: { [field]: { _errors: [{ code, message }] } } }
  return new ApiError(400, 50035, 'Invalid Form Body', body)
}
