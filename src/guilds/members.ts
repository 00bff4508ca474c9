// Reading one member of a guild the caller is in (10007 when the user is not a member).
import { Errors } from '../core/errors'
import { findUser } from '../accounts/store'
import { reading } from '../db/client'
import { guildAccess } from './access'
import { serializeMember } from './serialize'
import { getMember } from './store'

export async function guildMember(callerId: string, guildId: string, userId: string) {
  return await reading(async () => {
    const { guild } = await guildAccess(guildId, callerId)
    const member = await getMember(guild.id, userId)
    if (!member) throw Errors.unknownMember()
    return serializeMember(member, await findUser(member.userId))
  })
}
