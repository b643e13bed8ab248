"""The agent's only way out of its container: a forwarder from a port of
the container's own loopback to the metering proxy's unix socket, which the
harness mounts into the container (the container has no network). It runs
as root, so the agent's user can neither stop nor replace it.

usage: python3 -I forward.py SOCKET PORT READY-FILE
"""

import asyncio
import os
import sys

SOCKET, PORT, READY = sys.argv[1], int(sys.argv[2]), sys.argv[3]


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        pass


async def handle(client_r, client_w):
    try:
        up_r, up_w = await asyncio.open_unix_connection(SOCKET)
    except OSError as e:
        print("forward: the proxy cannot be reached: %s" % e, file=sys.stderr, flush=True)
        client_w.close()
        return
    await asyncio.gather(pipe(client_r, up_w), pipe(up_r, client_w), return_exceptions=True)
    for w in (up_w, client_w):
        try:
            w.close()
        except OSError:
            pass


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", PORT)
    with open(READY + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(READY + ".tmp", READY)
    async with server:
        await server.serve_forever()


asyncio.run(main())
