"""A container's only way out: a relay from a port of the container's own
loopback to a proxy of the harness (an agent's metering proxy, an install's
build gate), over this process's standard input and output, which the
harness holds through the engine's exec connection (the container has no
network, and its engine may be on another machine than the harness). It
runs as root, so the agent's user can neither stop nor replace it.

Each connection accepted on the port gets an id, 1, 2, ... in the order
of its first frame, and its bytes travel both ways in frames: a 4-byte
id, a 4-byte length (big-endian) and that many bytes, at most MAX_FRAME.
A frame of length 0 ends a connection: from here, the client sent all it
will (its end of file); from the harness, it is closed. The output starts
with GREETING, written once the port listens. At most MAX_CONNECTIONS
connections are open at once; more are closed as they come.

usage: python3 -I relay.py PORT MAX_CONNECTIONS
"""

import asyncio
import os
import struct
import sys

PORT, MAX_CONNECTIONS = int(sys.argv[1]), int(sys.argv[2])
MAX_FRAME = 65536
GREETING = b"FBRELAY1"
HEADER = struct.Struct(">II")


class Relay:
    def __init__(self, out):
        self.out = out  # the harness's end: this process's stdout
        self.last = 0  # the last id given
        self.conns = {}  # id -> the connection's writer, until the harness closes it
        self.open = 0  # connections accepted and not yet closed by the harness

    def send(self, cid, data):
        self.out.write(HEADER.pack(cid, len(data)) + data)

    async def handle(self, reader, writer):
        if self.open >= MAX_CONNECTIONS:
            writer.close()
            return
        self.open += 1
        cid = 0
        while True:
            try:
                data = await reader.read(MAX_FRAME)
            except (ConnectionError, OSError):
                data = b""
            if cid == 0:
                # The id is given with the first frame, so that ids reach
                # the harness in order.
                self.last += 1
                cid = self.last
                self.conns[cid] = writer
            if cid not in self.conns:
                return  # the harness closed it
            self.send(cid, data)
            await self.out.drain()
            if not data:
                return

    async def pump(self, stdin):
        """Frames from the harness to the connections, until it closes."""
        while True:
            try:
                cid, n = HEADER.unpack(await stdin.readexactly(HEADER.size))
                if n > MAX_FRAME:
                    print("relay: the harness sent a frame of %d bytes" % n, file=sys.stderr, flush=True)
                    return
                data = await stdin.readexactly(n) if n else b""
            except asyncio.IncompleteReadError:
                return
            w = self.conns.get(cid)
            if w is None:
                continue  # ended here while the frame was on its way
            if not data:
                del self.conns[cid]
                self.open -= 1
                w.close()
                continue
            w.write(data)
            try:
                await w.drain()
            except (ConnectionError, OSError):
                pass


async def main():
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader(limit=2 * MAX_FRAME)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), os.fdopen(0, "rb", 0))
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(1, "wb", 0))
    out = asyncio.StreamWriter(transport, protocol, None, loop)
    relay = Relay(out)
    await asyncio.start_server(relay.handle, "127.0.0.1", PORT)
    out.write(GREETING)
    await out.drain()
    await relay.pump(stdin)


asyncio.run(main())
# The harness closed the stream: nothing is left to relay.
os._exit(0)
