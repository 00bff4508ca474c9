// Reading one member of a guild the caller is in (10007 when the user is not a member).
import { Errors } from '../core/errors'
import { findUser } from '../accounts/store'
import { reading } from '../db/client'
import { guildAccess } from './access'
import { serializeMember } from './serialize'
import { getMember } from './store'

export function guildMember(callerId: string, guildId: string, userId: string) {
  return reading(() => {
    const { guild } = guildAccess(guildId, callerId)
    const member = getMember(guild.id, userId)
    if (!member) throw Errors.unknownMember()
    return serializeMember(member, findUser(member.userId))
  })
}
