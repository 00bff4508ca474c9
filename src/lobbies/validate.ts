// Lobby bodies: the form checks of http/form.ts, plus metadata maps within the lobby limits (key count, key and
// value length) and the override URL's form, reported the way Discord's form errors do.
import { FormCheck as FieldCheck } from '../http/form'
import { webhookUrlProblem } from '../oauth2/event-webhooks'
import {
  MAX_METADATA_CHARS,
  MAX_WEBHOOK_URL_CHARS,
  MAX_METADATA_KEYS,
  MODERATION_METADATA_KEY_CHARS,
  MODERATION_METADATA_KEYS,
  MODERATION_METADATA_VALUE_CHARS,
} from './limits'
import type { Metadata } from './tables'

export class FormCheck extends FieldCheck {
  /** A metadata map: undefined stays undefined (not given), null stays null, otherwise string->string within limits. */
  metadata(path: string, value: unknown): Metadata | null | undefined {
    return this.dict(path, value, { maxKeys: MAX_METADATA_KEYS, maxChars: MAX_METADATA_CHARS })
  }

  /**
   * `override_event_webhooks_url`: undefined (keep), null (clear), or an http(s) URL of at most
   * MAX_WEBHOOK_URL_CHARS characters. Its host and the PING are judged after the form (event-webhooks.ts).
   */
  webhookUrl(path: string, value: unknown): string | null | undefined {
    if (value === undefined || value === null) return value
    if (typeof value !== 'string') {
      this.add(path, 'BASE_TYPE_STRING', 'Could not interpret value as string.')
      return undefined
    }
    if (value.length > MAX_WEBHOOK_URL_CHARS) {
      this.add(path, 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_WEBHOOK_URL_CHARS} or fewer in length.`)
      return undefined
    }
    const problem = webhookUrlProblem(value)
    if (problem) {
      this.add(path, problem.code, problem.message)
      return undefined
    }
    return value
  }

  /** A moderation metadata body (the whole body): a string->string map within the moderation limits. */
  moderationMetadata(value: unknown): Metadata {
    const dict = this.dict('', value ?? {}, {
      maxKeys: MODERATION_METADATA_KEYS,
      maxKeyChars: MODERATION_METADATA_KEY_CHARS,
      maxChars: MODERATION_METADATA_VALUE_CHARS,
    })
    return dict ?? {}
  }
}
