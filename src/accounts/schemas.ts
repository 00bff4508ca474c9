// TypeBox schemas of the accounts domain: the user objects and login settings other domains answer with, and the
// settings body. Input types are derived from them.
import { t } from 'elysia'
import { Int } from '../http/docs'
import { LOCALES, THEMES } from './settings'

const Snowflake = t.String({ pattern: '^[0-9]{1,20}$' })

export const PublicUser = t.Object(
  {
    id: Snowflake,
    username: t.String(),
    global_name: t.Nullable(t.String()),
    discriminator: t.String(),
    avatar: t.Nullable(t.String()),
    bot: t.Boolean(),
    public_flags: Int(),
  },
  { description: 'User' },
)

/** The calling user: OAuth2 tokens see e-mail and verified only with the email scope, and never the phone. */
export const PrivateUser = t.Composite(
  [
    PublicUser,
    t.Object({
      email: t.Optional(t.Nullable(t.String())),
      verified: t.Optional(t.Boolean()),
      phone: t.Optional(t.Nullable(t.String())),
      flags: Int(),
      locale: t.String(),
      mfa_enabled: t.Boolean(),
      authenticator_types: t.Optional(
        t.Array(t.Union([t.Literal(1), t.Literal(2), t.Literal(3)]), {
          description:
            "The second factors on (Discord's authenticator types: 1 WebAuthn security key or passkey, 2 TOTP authenticator app, 3 SMS), ascending; user sessions and bots only",
        }),
      ),
    }),
  ],
  { description: 'The calling user' },
)

export const LoginSettings = t.Object({ locale: t.String(), theme: t.String() }, { description: 'Login settings' })

export const SettingsPatchSchema = t.Object(
  {
    locale: t.Optional(t.Union(LOCALES.map((l) => t.Literal(l)))),
    theme: t.Optional(t.Union(THEMES.map((l) => t.Literal(l)))),
  },
  { examples: [{ locale: 'en-GB', theme: 'light' }] },
)
