# A discord.py bot against our server, pointed at it by its two base URLs only (README "Client libraries"). Run by
# tests/libraries/discordpy.test.ts with BASE_URL, BOT_TOKEN, OWNER_TOKEN (the guild owner's user token), GUILD_ID and
# CHANNEL_ID in the environment; prints one JSON line of what it saw, which the test asserts on. Each step records its outcome and the run goes on, so one
# failure does not hide the others.
import asyncio
import json
import logging
import os
import time
import traceback

import aiohttp
import discord
import yarl
from discord.http import Route

BASE = os.environ['BASE_URL']
TOKEN = os.environ['BOT_TOKEN']
OWNER_TOKEN = os.environ['OWNER_TOKEN']
GUILD_ID = int(os.environ['GUILD_ID'])
CHANNEL_ID = int(os.environ['CHANNEL_ID'])

discord.http.Route.BASE = f'{BASE}/api/v10'
discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(BASE.replace('http', 'ws', 1) + '/gateway')


class RateLimitWarnings(logging.Handler):
    """Counts discord.py's 'We are being rate limited' warnings: each is a 429 it waited out."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record):
        if 'being rate limited' in record.getMessage():
            self.count += 1


limited = RateLimitWarnings()
logging.getLogger('discord.http').addHandler(limited)
logging.getLogger('discord.http').setLevel(logging.WARNING)

intents = discord.Intents.default()
intents.message_content = True
# on_ready comes this long after the last GUILD_CREATE (2 s by default, against Discord too).
client = discord.Client(intents=intents, guild_ready_timeout=0.2)
results = {'version': discord.__version__}
ready = asyncio.Event()


@client.event
async def on_ready():
    ready.set()


async def step(name, run):
    try:
        results[name] = await run()
    except Exception as error:
        results[name] = {'error': f'{type(error).__name__}: {error}', 'trace': traceback.format_exc(limit=4)}


async def login():
    await client.login(TOKEN)
    app = client.application
    return {'user_id': str(client.user.id), 'bot': client.user.bot, 'application_id': str(app.id), 'name': app.name}


async def gateway():
    asyncio.ensure_future(client.connect(reconnect=False))
    await asyncio.wait_for(ready.wait(), 10)
    guild = client.get_guild(GUILD_ID)
    channel = client.get_channel(CHANNEL_ID)
    return {
        'ready_user_id': str(client.user.id),
        'guild': guild
        and {
            'id': str(guild.id),
            'name': guild.name,
            'member_count': guild.member_count,
            'unavailable': guild.unavailable,
        },
        'me': guild and guild.me and str(guild.me.id),
        'channel': channel and {'id': str(channel.id), 'type': type(channel).__name__, 'name': channel.name},
    }


async def message():
    channel = client.get_channel(CHANNEL_ID)
    marker = f'hello from discord.py {time.time()}'
    seen = asyncio.ensure_future(client.wait_for('message', check=lambda m: m.content == marker, timeout=5))
    sent = await channel.send(marker)
    event = await seen
    return {
        'sent_id': str(sent.id),
        'event_id': str(event.id),
        'event_author_id': str(event.author.id),
        'event_channel_id': str(event.channel.id),
        'event_guild_id': str(event.guild.id) if event.guild else None,
    }


async def members_message():
    """A member writes (through the API, as its own client would): on_message's author is a Member, not a User."""
    marker = f'from the owner {time.time()}'
    seen = asyncio.ensure_future(client.wait_for('message', check=lambda m: m.content == marker, timeout=5))
    async with aiohttp.ClientSession() as owner:
        url = f'{BASE}/api/v10/channels/{CHANNEL_ID}/messages'
        async with owner.post(url, json={'content': marker}, headers={'Authorization': OWNER_TOKEN}) as response:
            response.raise_for_status()
    event = await seen
    author = event.author
    return {'author_id': str(author.id), 'class': type(author).__name__, 'joined': author.joined_at is not None}


async def history():
    channel = client.get_channel(CHANNEL_ID)
    return [{'id': str(m.id), 'content': m.content, 'author_id': str(m.author.id)} async for m in channel.history(limit=5)]


async def form_error():
    try:
        await client.get_channel(CHANNEL_ID).send('x' * 2001)
    except discord.HTTPException as error:
        return {'class': type(error).__name__, 'status': error.status, 'code': error.code, 'text': error.text}
    return {'error': 'no exception'}


async def users():
    """Client.fetch_user and Guild.fetch_member: GET /users/{id} and GET /guilds/{id}/members/{id}."""
    guild = client.get_guild(GUILD_ID)
    user = await client.fetch_user(guild.owner_id)
    member = await guild.fetch_member(guild.owner_id)
    try:
        await client.fetch_user(1)
        unknown = 'no exception'
    except discord.NotFound as error:
        unknown = {'class': type(error).__name__, 'code': error.code}
    return {
        'user': {'id': str(user.id), 'name': user.name, 'bot': user.bot},
        'member': {'id': str(member.id), 'class': type(member).__name__, 'joined': member.joined_at is not None},
        'unknown': unknown,
    }


async def edits():
    """fetch_message, Message.edit (and on_message_edit from MESSAGE_UPDATE), Message.delete (on_raw_message_delete)."""
    channel = client.get_channel(CHANNEL_ID)
    sent = await channel.send('to be edited')
    fetched = await channel.fetch_message(sent.id)
    seen_edit = asyncio.ensure_future(client.wait_for('message_edit', check=lambda b, a: a.id == sent.id, timeout=5))
    edited = await sent.edit(content='edited by discord.py')
    before, after = await seen_edit
    seen_delete = asyncio.ensure_future(
        client.wait_for('raw_message_delete', check=lambda e: e.message_id == sent.id, timeout=5)
    )
    await edited.delete()
    deleted = await seen_delete
    try:
        await channel.fetch_message(sent.id)
        gone = 'still there'
    except discord.NotFound as error:
        gone = {'class': type(error).__name__, 'code': error.code}
    first, second = await channel.send('bulk 1'), await channel.send('bulk 2')
    seen_bulk = asyncio.ensure_future(client.wait_for('raw_bulk_message_delete', timeout=5))
    await channel.delete_messages([first, second])
    bulk = await seen_bulk
    return {
        'fetched': {'id': str(fetched.id), 'content': fetched.content, 'author_id': str(fetched.author.id)},
        'edited': {'content': edited.content, 'edited_at': edited.edited_at is not None},
        'event': {'before': before.content, 'after': after.content},
        'deleted': {'id': str(deleted.message_id), 'channel_id': str(deleted.channel_id)},
        'gone': gone,
        'bulk': sorted(str(i) for i in bulk.message_ids) == sorted([str(first.id), str(second.id)]),
    }


async def embeds():
    """channel.send(embed=discord.Embed(...)): the embed comes back from the REST answer and from on_message."""
    channel = client.get_channel(CHANNEL_ID)
    embed = discord.Embed(title='Match found', description='Two teams of five', colour=0x5865F2)
    embed.add_field(name='Map', value='Harbour', inline=True)
    embed.set_footer(text='Lobby 7')
    seen = asyncio.ensure_future(
        client.wait_for('message', check=lambda m: m.embeds and m.embeds[0].title == 'Match found', timeout=5)
    )
    sent = await channel.send(embed=embed)
    event = await seen
    shown = lambda e: {
        'title': e.title,
        'description': e.description,
        'colour': e.colour.value if e.colour else None,
        'fields': [(f.name, f.value, f.inline) for f in e.fields],
        'footer': e.footer.text,
    }
    return {'content': sent.content, 'sent': shown(sent.embeds[0]), 'event': shown(event.embeds[0])}


async def typing():
    """channel.typing(): POST /typing, and the TYPING_START it sends back as on_typing."""
    channel = client.get_channel(CHANNEL_ID)
    seen = asyncio.ensure_future(client.wait_for('typing', check=lambda c, u, w: u.id == client.user.id, timeout=5))
    async with channel.typing():
        pass
    where, who, when = await seen
    return {'channel_id': str(where.id), 'user_id': str(who.id), 'member': type(who).__name__}


async def pins():
    """Message.pin and unpin (on_guild_channel_pins_update), TextChannel.pins."""
    channel = client.get_channel(CHANNEL_ID)
    message = await channel.send('pin me')
    seen = asyncio.ensure_future(client.wait_for('guild_channel_pins_update', timeout=5))
    await message.pin()
    where, last_pin = await seen
    pinned = await channel.pins()
    fetched = await channel.fetch_message(message.id)
    await message.unpin()
    return {
        'event': {'channel_id': str(where.id), 'last_pin': last_pin is not None},
        'pins': [str(m.id) for m in pinned],
        'message_id': str(message.id),
        'pinned': fetched.pinned,
        'after_unpin': [str(m.id) for m in await channel.pins()],
    }


async def reactions():
    """Message.add_reaction('👍') (on_raw_reaction_add), the counts with `me`, Reaction.users, remove_reaction."""
    channel = client.get_channel(CHANNEL_ID)
    message = await channel.send('react to me')
    seen = asyncio.ensure_future(client.wait_for('raw_reaction_add', check=lambda e: e.message_id == message.id, timeout=5))
    await message.add_reaction('👍')
    event = await seen
    fetched = await channel.fetch_message(message.id)
    reaction = fetched.reactions[0]
    users = [str(u.id) async for u in reaction.users()]
    removed = asyncio.ensure_future(
        client.wait_for('raw_reaction_remove', check=lambda e: e.message_id == message.id, timeout=5)
    )
    await message.remove_reaction('👍', client.user)
    await removed
    try:
        await message.add_reaction('custom:123456789012345678')
        custom = 'no exception'
    except discord.HTTPException as error:
        custom = {'status': error.status, 'code': error.code}
    return {
        'event': {'user_id': str(event.user_id), 'emoji': str(event.emoji), 'member': event.member is not None},
        'reaction': {'emoji': str(reaction.emoji), 'count': reaction.count, 'me': reaction.me},
        'users': users,
        'after_remove': len((await channel.fetch_message(message.id)).reactions),
        'custom': custom,
    }


async def commands():
    """app_commands.CommandTree.sync(): PUT of the global list, and of a guild's; fetch_commands reads them back."""
    tree = discord.app_commands.CommandTree(client)

    @tree.command(name='queue', description='Join the match queue')
    @discord.app_commands.describe(mode='Which mode')
    async def queue(interaction: discord.Interaction, mode: str, size: int = 5):
        pass

    @tree.context_menu(name='Report')
    async def report(interaction: discord.Interaction, message: discord.Message):
        pass

    synced = await tree.sync()
    guild = discord.Object(GUILD_ID)
    tree.copy_global_to(guild=guild)
    in_guild = await tree.sync(guild=guild)
    again = await tree.sync()
    fetched = await tree.fetch_commands()
    shown = lambda c: {
        'name': c.name,
        'type': c.type.name,
        'options': [(o.name, o.type.name, o.required) for o in c.options],
        'guild_id': str(c.guild_id) if c.guild_id else None,
    }
    return {
        'synced': [shown(c) for c in synced],
        'guild': [shown(c) for c in in_guild],
        'same_ids': [c.id for c in again] == [c.id for c in synced],
        'fetched': [c.name for c in fetched],
    }


async def lobby():
    created = await client.http.request(Route('POST', '/lobbies'), json={'metadata': {'from': 'discord.py'}})
    lobby_id = created['id']
    posted = await client.http.request(
        Route('POST', '/lobbies/{lobby_id}/messages', lobby_id=lobby_id), json={'content': 'lobby hello'}
    )
    return {'id': lobby_id, 'metadata': created.get('metadata'), 'message': posted}


async def pacing():
    """21 lobby messages at once against the route's 10 per second: discord.py spaces them by the headers alone."""
    lobby_id = (await client.http.request(Route('POST', '/lobbies'), json={}))['id']
    route = lambda: Route('POST', '/lobbies/{lobby_id}/messages', lobby_id=lobby_id)
    before = limited.count
    start = time.monotonic()
    sent = await asyncio.gather(*(client.http.request(route(), json={'content': f'm{i}'}) for i in range(21)))
    return {'sent': len(sent), 'seconds': time.monotonic() - start, 'rate_limited': limited.count - before}


async def waited_out():
    """The bucket spent by another client: discord.py meets the 429, waits retry_after and tries again."""
    lobby_id = (await client.http.request(Route('POST', '/lobbies'), json={}))['id']
    url = f'{BASE}/api/v10/lobbies/{lobby_id}/messages'
    headers = {'Authorization': f'Bot {TOKEN}'}
    async with aiohttp.ClientSession() as other:
        for _ in range(100):
            async with other.post(url, json={'content': 'other'}, headers=headers) as response:
                refused = response.status == 429 and (await response.json())['retry_after'] > 0.3
            if refused:
                break
        before = limited.count
        start = time.monotonic()
        posted = await client.http.request(
            Route('POST', '/lobbies/{lobby_id}/messages', lobby_id=lobby_id), json={'content': 'after the wait'}
        )
    return {'content': posted['content'], 'seconds': time.monotonic() - start, 'rate_limited': limited.count - before}


async def close():
    await client.close()
    return {'closed': client.is_closed()}


async def sharded():
    """AutoShardedClient asks GET /gateway/bot for the shard count and reads its shard back from READY."""
    bot = discord.AutoShardedClient(intents=intents, guild_ready_timeout=0.2)
    shard_ready = asyncio.Event()

    async def on_ready():
        shard_ready.set()

    bot.event(on_ready)
    try:
        await bot.login(TOKEN)
        asyncio.ensure_future(bot.connect(reconnect=False))
        await asyncio.wait_for(shard_ready.wait(), 10)
        guild = bot.get_guild(GUILD_ID)
        return {'shard_count': bot.shard_count, 'shards': sorted(bot.shards), 'guild_shard': guild and guild.shard_id}
    finally:
        await bot.close()


async def main():
    await step('login', login)
    await step('gateway', gateway)
    if ready.is_set():
        await step('message', message)
        await step('members_message', members_message)
        await step('history', history)
        await step('form_error', form_error)
        await step('users', users)
        await step('edits', edits)
        await step('embeds', embeds)
        await step('typing', typing)
        await step('pins', pins)
        await step('reactions', reactions)
        await step('commands', commands)
    await step('lobby', lobby)
    await step('pacing', pacing)
    await step('waited_out', waited_out)
    await step('close', close)
    await step('sharded', sharded)
    print(json.dumps(results))


asyncio.run(main())
