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
    await step('lobby', lobby)
    await step('pacing', pacing)
    await step('waited_out', waited_out)
    await step('close', close)
    await step('sharded', sharded)
    print(json.dumps(results))


asyncio.run(main())
