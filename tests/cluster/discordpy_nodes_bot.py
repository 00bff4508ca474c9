# A discord.py bot for tests/cluster/libraries.test.ts: pointed at the load balancer in front of the nodes by its two
# base URLs only (BASE_URL), it stays connected (client.start: discord.py's own reconnect and resume) and prints one
# JSON line per thing the test follows: every Gateway frame it receives (op, t, s) and every one it sends (op), the
# member's messages as on_message gives them, on_ready and on_resumed. A line "quit" on stdin closes it (close 1000).
import asyncio
import json
import logging
import os
import sys

import discord
import yarl

BASE = os.environ['BASE_URL']
TOKEN = os.environ['BOT_TOKEN']
POSTER_ID = int(os.environ['POSTER_ID'])
CHANNEL_ID = int(os.environ['CHANNEL_ID'])

discord.http.Route.BASE = f'{BASE}/api/v10'
discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(BASE.replace('http', 'ws', 1) + '/gateway')
# Its reconnects and resumes, for the test's report when something differs (stderr).
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format='%(name)s %(levelname)s %(message)s')

intents = discord.Intents.default()
intents.message_content = True
client = discord.Client(intents=intents, guild_ready_timeout=0.2, enable_debug_events=True)


def say(**line):
    print(json.dumps(line), flush=True)


@client.event
async def on_socket_raw_receive(raw):
    frame = json.loads(raw)
    say(e='receive', op=frame.get('op'), t=frame.get('t'), s=frame.get('s'))


@client.event
async def on_socket_raw_send(raw):
    if isinstance(raw, (bytes, bytearray)):
        raw = raw.decode()
    say(e='send', op=json.loads(raw).get('op'))


@client.event
async def on_ready():
    say(e='ready')


@client.event
async def on_resumed():
    say(e='resumed')


@client.event
async def on_message(message):
    if message.author.id == POSTER_ID and message.channel.id == CHANNEL_ID:
        say(e='message', content=message.content)


async def main():
    running = asyncio.ensure_future(client.start(TOKEN))
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if line.strip() == 'quit' or line == '' or running.done():
            break
    await client.close()
    try:
        await running
    except Exception as error:
        say(e='error', error=f'{type(error).__name__}: {error}')
    say(e='closed')


asyncio.run(main())
