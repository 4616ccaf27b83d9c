"""A counting and delaying HTTP/1.1 proxy for the S3 benchmark (benches/s3/bench.py).

Clients talk to the proxy as if it were the S3 server; each client connection gets its own
connection to the server. Every request is counted by kind (GET, ranged GET, PUT, multipart
upload request, DELETE, HEAD, LIST, other) and held back `--delay-ms` once, before it is sent
on, so each request costs one added round trip of latency. Request and response bodies are
streamed through (Content-Length or chunked; keep-alive connections carry any number of
requests). `GET /__proxy__/stats` is answered by the proxy itself: the counters as JSON
(requests by kind and status, bytes each way, most requests in flight at once -- sent on
and not yet answered in full -- since the last reading, the proxy's own CPU seconds).

Usage: python proxy.py --listen PORT --upstream HOST:PORT [--delay-ms MS] [--host 127.0.0.1]
                       [--log FILE]
"""

import argparse
import asyncio
import json
import socket
import sys
import time
from collections import Counter
from urllib.parse import parse_qs, urlsplit

STATS_PATH = "/__proxy__/stats"
PIECE = 1 << 20  # bytes moved per read when streaming a body


class Stats:
    def __init__(self):
        self.kinds = Counter()
        self.statuses = Counter()
        self.bytes_up = 0  # request bodies
        self.bytes_down = 0  # response bodies
        self.in_flight = 0
        self.max_in_flight = 0
        self.connections = 0

    def as_json(self) -> bytes:
        return json.dumps({
            "kinds": dict(self.kinds), "statuses": dict(self.statuses),
            "bytes_up": self.bytes_up, "bytes_down": self.bytes_down,
            "max_in_flight": self.max_in_flight, "connections": self.connections,
            "requests": sum(self.kinds.values()),
            "cpu_seconds": time.process_time(),
        }).encode()


def kind_of(method: str, target: str, headers: dict) -> str:
    """The kind of an S3 request (path-style addressing: /bucket/key?query)."""
    parts = urlsplit(target)
    query = parse_qs(parts.query, keep_blank_values=True)
    key = parts.path.lstrip("/").partition("/")[2]
    if "uploadId" in query or "uploads" in query:
        return "MULTIPART"
    if method == "GET":
        if not key or "list-type" in query:
            return "LIST"
        rng = headers.get("range", "")
        if rng.startswith("bytes=-"):
            return "GET_SUFFIX"
        return "GET_RANGE" if rng else "GET"
    if method == "POST" and "delete" in query:
        return "DELETE"
    if method in ("PUT", "DELETE", "HEAD"):
        return method
    return "OTHER"


async def read_head(reader: asyncio.StreamReader):
    """A message head (start line, headers as a dict with lower-case names, raw bytes), or
    None at a clean end of the stream."""
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if e.partial:
            raise
        return None
    lines = raw.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return lines[0], headers, raw


async def copy_body(reader, writer, headers: dict, until_eof: bool = False,
                    before_read=lambda: None) -> int:
    """Streams one message body from `reader` to `writer` as its headers frame it (calling
    `before_read` before each read); the number of body bytes (chunk framing excluded)."""
    moved = 0
    if "chunked" in headers.get("transfer-encoding", "").lower():
        while True:
            size_line = await reader.readuntil(b"\r\n")
            writer.write(size_line)
            size = int(size_line.split(b";")[0].strip(), 16)
            if size == 0:
                # Trailers, then the empty line.
                while True:
                    line = await reader.readuntil(b"\r\n")
                    writer.write(line)
                    if line == b"\r\n":
                        break
                await writer.drain()
                return moved
            left = size
            while left:
                before_read()
                data = await reader.read(min(left, PIECE))
                if not data:
                    raise ConnectionError("body cut short")
                writer.write(data)
                left -= len(data)
                await writer.drain()
            moved += size
            writer.write(await reader.readexactly(2))
    elif "content-length" in headers:
        left = int(headers["content-length"])
        while left:
            before_read()
            data = await reader.read(min(left, PIECE))
            if not data:
                raise ConnectionError("body cut short")
            writer.write(data)
            left -= len(data)
            moved += len(data)
            await writer.drain()
    elif until_eof:
        while data := await reader.read(PIECE):
            writer.write(data)
            moved += len(data)
            await writer.drain()
    return moved


def quick_ack(sock) -> None:
    """Asks the kernel to acknowledge what arrives next at once. A server that writes an
    answer's head and body separately without TCP_NODELAY (s3s-fs) otherwise waits, by
    Nagle's algorithm, for the delayed acknowledgement of the head: 40 ms per answer."""
    if hasattr(socket, "TCP_QUICKACK"):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)


class Proxy:
    def __init__(self, upstream: tuple, delay: float, log=None):
        self.upstream = upstream
        self.delay = delay
        self.log = log
        self.stats = Stats()

    async def serve(self, client_r, client_w):
        self.stats.connections += 1
        up_r = up_w = None
        pending = asyncio.Queue()  # methods of requests sent on, awaiting their answers
        answers = None
        try:
            while True:
                head = await read_head(client_r)
                if head is None:
                    break
                start, headers, raw = head
                method, target, _ = start.split(" ", 2)
                if target.startswith(STATS_PATH):
                    body = self.stats.as_json()
                    # The most in flight is counted from one reading of the stats to the next.
                    self.stats.max_in_flight = self.stats.in_flight
                    client_w.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                   b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
                    await client_w.drain()
                    continue
                kind = kind_of(method, target, headers)
                self.stats.kinds[kind] += 1
                if self.log:
                    rng = headers.get("range", "")
                    print(f"{kind} {method} {target} {rng}", file=self.log, flush=True)
                self.stats.in_flight += 1
                self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
                if self.delay:
                    await asyncio.sleep(self.delay)
                if up_w is None:
                    up_r, up_w = await asyncio.open_connection(*self.upstream, limit=PIECE)
                    answers = asyncio.ensure_future(self.relay_answers(
                        up_r, up_w.get_extra_info("socket"), client_w, pending))
                await pending.put(method)
                up_w.write(raw)
                # (Awaited first: `x += await ...` would read x before the await and lose the
                # other connections' updates made meanwhile.)
                moved = await copy_body(client_r, up_w, headers)
                self.stats.bytes_up += moved
                await up_w.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            if answers is not None:
                # Let the last answers through before closing.
                await pending.put(None)
                try:
                    await answers
                except (ConnectionError, asyncio.IncompleteReadError):
                    pass
            for w in (up_w, client_w):
                if w is not None:
                    w.close()

    async def relay_answers(self, up_r, up_sock, client_w, pending):
        """Streams the server's answers back, one per request sent on, in order."""
        answering = False
        try:
            while True:
                method = await pending.get()
                if method is None:
                    return
                answering = True
                while True:
                    quick_ack(up_sock)
                    head = await read_head(up_r)
                    if head is None:
                        raise ConnectionError("the server closed the connection")
                    start, headers, raw = head
                    status = int(start.split(" ", 2)[1])
                    client_w.write(raw)
                    if status >= 200 or status == 101:
                        break
                    await client_w.drain()  # 100 Continue: the real answer follows
                self.stats.statuses[str(status)] += 1
                if method != "HEAD" and status not in (204, 304):
                    eof = "content-length" not in headers and "transfer-encoding" not in headers
                    moved = await copy_body(up_r, client_w, headers, eof,
                                            lambda: quick_ack(up_sock))
                    self.stats.bytes_down += moved
                await client_w.drain()
                self.stats.in_flight -= 1  # answered in full
                answering = False
        finally:
            # Requests left unanswered by a connection that died no longer count as in flight.
            self.stats.in_flight -= answering
            while not pending.empty():
                if pending.get_nowait() is not None:
                    self.stats.in_flight -= 1
            client_w.close()


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--listen", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--upstream", required=True, help="HOST:PORT of the S3 server")
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--log", help="a file where every request is written (kind, line)")
    args = parser.parse_args()
    host, _, port = args.upstream.rpartition(":")
    log = open(args.log, "a") if args.log else None
    proxy = Proxy((host, int(port)), args.delay_ms / 1000, log)
    server = await asyncio.start_server(proxy.serve, args.host, args.listen, limit=PIECE,
                                        backlog=1024)
    print(f"proxy: {args.host}:{args.listen} -> {args.upstream}, {args.delay_ms:g} ms per "
          f"request", file=sys.stderr, flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
