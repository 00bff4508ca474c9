// Lobby bodies: the form checks of http/form.ts, plus metadata maps within the lobby limits (key count, key and
// value length), reported the way Discord's form errors do.
import { FormCheck as FieldCheck } from '../http/form'
import {
  MAX_METADATA_CHARS,
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
