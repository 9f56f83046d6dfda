"""Portico's bridge to a Python web application (docs/python.md).

Started by Portico as `python3 portico_bridge.py MODE APPLICATION CLEAR THREADS [SOCKET]`, it loads
the file that defines `application` and serves the requests Portico sends it. MODE is `wsgi` (PEP
3333 on a pool of THREADS threads), `wsgid` (PEP 3333, one request at a time: Portico runs one such
process per CPU) or `asgi` (ASGI 3 on one asyncio loop). Standard library only.

With SOCKET (wsgi and asgi), the process serves every worker process of a Portico with several: it
listens on that Unix socket and serves each connection accepted there as a channel of its own (stream
ids are per connection), and stdin only says, by closing, that no new connection will come.

Portico and the bridge talk over the process's original stdin and stdout in frames: a 9-byte head
(type: u8, stream: u32, length: u32, big-endian) and `length` bytes. Bodies flow both ways under a
per-stream window of WINDOW bytes that the reader replenishes with CREDIT frames as it consumes
them, so a slow client or a slow application holds back only its own stream. The application's own
stdout and stdin are moved out of the way (print() goes to the error log), so nothing it does can
corrupt the frames.
"""

import asyncio
import collections
import importlib.util
import json
import os
import queue
import select
import socket
import struct
import sys
import threading
import time
import traceback

HEAD = struct.Struct(">BII")
U32 = struct.Struct(">I")
CLOSE = struct.Struct(">H")

# Frame types; BODY, END, CREDIT and the WebSocket messages go both ways.
REQUEST = 1  # Portico → bridge: the request's JSON head (environ or scope)
START = 2  # bridge → Portico: {"status": N, "headers": [[name, value], …]}
BODY = 3
END = 4  # the request body, or the response, is complete
CREDIT = 5  # u32: the reader consumed this many more body bytes
CANCEL = 6  # Portico → bridge: the client went away
FAIL = 7  # bridge → Portico: the application failed (text); the stream is over
WS_ACCEPT = 8  # bridge → Portico: {"subprotocol": …, "headers": […]}
WS_TEXT = 9
WS_BINARY = 10
WS_CLOSE = 11  # u16 code, then the reason (UTF-8)
READY = 12  # bridge → Portico, stream 0: {"python": version, "executable": path}
START_FAILED = 13  # bridge → Portico, stream 0: {"error": …, "traceback": …, …}
GOAWAY = 14  # bridge → a connection, stream 0: no more requests here; the process is being replaced
STUCK = 15  # bridge → Portico (stdout), stream 0: a request given up on is still running

WINDOW = 256 * 1024
CREDIT_STEP = WINDOW // 4
# A body chunk goes out in frames of at most this much (Portico refuses frames over 16 MiB).
PIECE = WINDOW
# A WebSocket message is one frame: larger ones are refused to the application.
MAX_MESSAGE = 16 * 1024 * 1024
FILE_BLOCK = 64 * 1024
# Portico's GIVE_UP_MS: how long an application has to end a request given up on (a CANCEL with a
# payload) before its process counts as stuck.
GIVE_UP = 1.0
# How often a thread reads the connections ahead of an asyncio loop an application may block.
READ_AHEAD = GIVE_UP / 4


class ClientGone(OSError):
    """The client went away: what the application was doing for it stops."""


def frame(kind, stream, payload=b""):
    return HEAD.pack(kind, stream, len(payload)) + payload


def split_frames(buffer):
    """The whole frames at the start of `buffer` (a bytearray), taken out of it."""
    frames, offset = [], 0
    while len(buffer) - offset >= 9:
        kind, stream_id, length = HEAD.unpack_from(buffer, offset)
        if len(buffer) - offset - 9 < length:
            break
        frames.append((kind, stream_id, bytes(buffer[offset + 9 : offset + 9 + length])))
        offset += 9 + length
    del buffer[:offset]
    return frames


def write_all(fd, data):
    """All of `data` to the descriptor, waiting while a non-blocking one is full."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([], [fd], [])


def python_info():
    return {"python": sys.version.split()[0], "executable": sys.executable, "pid": os.getpid()}


def load_application(path, clear_import_path):
    """REFERENCE §18: the file runs as a module named after it, its directory first on sys.path."""
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    name = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, directory)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"{path} is not a Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    finally:
        if clear_import_path and directory in sys.path:
            sys.path.remove(directory)
    application = getattr(module, "application", None)
    if application is None:
        raise NotAnApplication(f"{path} defines no `application`")
    if not callable(application):
        raise NotAnApplication(f"`application` in {path} is not callable")
    return application


class NotAnApplication(Exception):
    """The file loaded, but holds no application: no traceback is worth showing."""


def start_failure(error):
    if isinstance(error, NotAnApplication):
        return dict(python_info(), error=str(error), traceback="")
    lines = traceback.format_exception_only(type(error), error)
    return dict(python_info(), error="".join(lines).strip(), traceback=traceback.format_exc())


def log_exception(what):
    sys.stderr.write(f"{what}\n{traceback.format_exc()}")
    sys.stderr.flush()


# ── WSGI ─────────────────────────────────────────────────────────────────────────────────────────


class Writer:
    """Frames to Portico; whole frames, one thread at a time; dropped once the other end is gone."""

    def __init__(self, write_all):
        self.write_all = write_all
        self.lock = threading.Lock()
        self.broken = False

    def send(self, data):
        with self.lock:
            if self.broken:
                return
            try:
                self.write_all(data)
            except OSError:
                # Nobody reads what the streams of a closed connection still send.
                self.broken = True


def fd_writer(fd):
    return Writer(lambda data: write_all(fd, data))


class Stream:
    __slots__ = ("id", "chunks", "ended", "cancelled", "credit", "consumed", "wake", "serving")

    def __init__(self, stream_id, has_body, wake):
        self.id = stream_id
        self.chunks = collections.deque()
        self.ended = not has_body
        self.cancelled = False
        self.credit = WINDOW
        self.consumed = 0
        self.wake = wake
        # A thread has it in hand (it is not waiting its turn).
        self.serving = False


class Channel:
    """The frames from Portico, read by one thread (threaded) or by whoever waits (single).

    Its requests go to `requests` as (channel, stream, head); `gave_up(channel, stream)` hears of
    each stream Portico gave up on (socket mode)."""

    def __init__(self, read, writer, threaded, requests, fd=None, gave_up=None):
        self.read = read
        self.fd = fd
        self.buffer = bytearray()
        self.writer = writer
        self.threaded = threaded
        self.lock = threading.Lock()
        self.streams = {}
        self.requests = requests
        self.gave_up = gave_up

    def fill(self):
        data = self.read(262144)
        if not data:
            raise EOFError
        self.buffer += data

    def read_frame(self):
        buffer = self.buffer
        while len(buffer) < 9:
            self.fill()
        kind, stream_id, length = HEAD.unpack_from(buffer)
        while len(buffer) < 9 + length:
            self.fill()
        payload = bytes(buffer[9 : 9 + length])
        del buffer[: 9 + length]
        return kind, stream_id, payload

    def poll(self):
        """Files what Portico has sent so far without waiting (one thread: a CANCEL mid-response)."""
        while True:
            buffer = self.buffer
            whole = len(buffer) >= 9 and len(buffer) >= 9 + U32.unpack_from(buffer, 5)[0]
            if not whole and not select.select([self.fd], [], [], 0)[0]:
                return
            self.pump()

    def pump(self):
        """Reads one frame and files it where its stream will look."""
        kind, stream_id, payload = self.read_frame()
        if kind == REQUEST:
            head = json.loads(payload)
            wake = threading.Condition(self.lock) if self.threaded else None
            stream = Stream(stream_id, head.pop("body", False), wake)
            with self.lock:
                self.streams[stream_id] = stream
            if self.threaded:
                self.requests.put((self, stream, head))
            else:
                self.requests.append((self, stream, head))
            return
        with self.lock:
            stream = self.streams.get(stream_id)
            if stream is None:
                return
            if kind == BODY:
                stream.chunks.append(payload)
            elif kind == END:
                stream.ended = True
            elif kind == CANCEL:
                stream.cancelled = True
            elif kind == CREDIT:
                stream.credit += U32.unpack(payload)[0]
            if stream.wake is not None:
                stream.wake.notify()
        if kind == CANCEL and payload and self.gave_up is not None:
            self.gave_up(self, stream)

    def still_serving(self, stream):
        with self.lock:
            return self.streams.get(stream.id) is stream and stream.serving

    def gone(self):
        """The connection closed: what its streams' threads still do for them stops."""
        with self.lock:
            for stream in self.streams.values():
                stream.cancelled = True
                if stream.wake is not None:
                    stream.wake.notify()

    def wait(self, stream, ready):
        """Until `ready()` holds for the stream (its lock held while it is asked)."""
        if self.threaded:
            with self.lock:
                while not ready():
                    stream.wake.wait()
        else:
            while not ready():
                self.pump()

    def done(self, stream):
        with self.lock:
            self.streams.pop(stream.id, None)


class Input:
    """wsgi.input: the request body as Portico streams it, to its end (CONTENT_LENGTH or chunked)."""

    def __init__(self, channel, stream):
        self.channel = channel
        self.stream = stream
        self.buffer = b""

    def _fill(self):
        """More bytes into the buffer; False at the end of the body."""
        stream = self.stream
        self.channel.wait(stream, lambda: stream.chunks or stream.ended or stream.cancelled)
        if stream.cancelled:
            raise ClientGone("the client went away")
        if not stream.chunks:
            return False
        with self.channel.lock:
            chunk = stream.chunks.popleft()
        self.buffer += chunk
        stream.consumed += len(chunk)
        if stream.consumed >= CREDIT_STEP:
            self.channel.writer.send(frame(CREDIT, stream.id, U32.pack(stream.consumed)))
            stream.consumed = 0
        return True

    def read(self, size=-1):
        if size is None or size < 0:
            # Pieces joined once: a 10 MB body read whole is not copied chunk by chunk.
            parts = [self.buffer]
            self.buffer = b""
            while self._fill():
                parts.append(self.buffer)
                self.buffer = b""
            return b"".join(parts)
        while len(self.buffer) < size and self._fill():
            pass
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def readline(self, size=-1):
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0 or (size is not None and 0 <= size <= len(self.buffer)):
                break
            if not self._fill():
                break
        limit = len(self.buffer) if end < 0 else end + 1
        if size is not None and size >= 0:
            limit = min(limit, size)
        data, self.buffer = self.buffer[:limit], self.buffer[limit:]
        return data

    def readlines(self, hint=-1):
        lines, total = [], 0
        for line in self:
            lines.append(line)
            total += len(line)
            if hint is not None and 0 < hint <= total:
                break
        return lines

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line


class FileWrapper:
    """wsgi.file_wrapper (PEP 3333 §Optional Platform-Specific File Handling)."""

    def __init__(self, filelike, block_size=FILE_BLOCK):
        self.filelike = filelike
        self.block_size = block_size
        if hasattr(filelike, "close"):
            self.close = filelike.close

    def __iter__(self):
        read = self.filelike.read
        while True:
            block = read(self.block_size)
            if not block:
                return
            yield block


class WsgiServer:
    """Serves the requests of `requests` (see Channel) on `threads` threads, or on the caller's."""

    def __init__(self, application, requests, multithread, threads):
        self.application = application
        self.requests = requests
        self.threads = threads
        self.base = {
            "wsgi.version": (1, 0),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": multithread,
            "wsgi.multiprocess": not multithread,
            "wsgi.run_once": False,
            "wsgi.file_wrapper": FileWrapper,
            "wsgi.input_terminated": True,
        }

    def start_threads(self):
        for _ in range(self.threads):
            threading.Thread(target=self.work, daemon=True).start()

    def run_single(self, channel):
        """wsgid over stdio: the one thread reads frames while it waits for them."""
        while True:
            while not self.requests:
                channel.pump()
            self.serve(*self.requests.popleft())

    def work(self):
        while True:
            self.serve(*self.requests.get())

    def serve(self, channel, stream, environ):
        send = channel.writer.send
        with channel.lock:
            stream.serving = True
        if stream.cancelled:
            # Gone while it waited its turn.
            channel.done(stream)
            return send(frame(END, stream.id))
        environ.update(self.base)
        environ["wsgi.input"] = Input(channel, stream)
        state = {"head": None, "sent": False}

        def body(data):
            if stream.cancelled:
                raise ClientGone("the client went away")
            if not state["sent"]:
                status, headers = state["head"] or (None, None)
                if status is None:
                    raise AssertionError("the application sent a body before start_response()")
                state["sent"] = True
                head = json.dumps({"status": int(status[:3]), "headers": headers}).encode()
                first, data = data[:PIECE], data[PIECE:]
                with channel.lock:
                    stream.credit -= len(first)
                send(frame(START, stream.id, head) + (frame(BODY, stream.id, first) if first else b""))
            for at in range(0, len(data), PIECE):
                if not channel.threaded:
                    channel.poll()
                channel.wait(stream, lambda: stream.credit > 0 or stream.cancelled)
                if stream.cancelled:
                    raise ClientGone("the client went away")
                piece = data[at : at + PIECE]
                with channel.lock:
                    stream.credit -= len(piece)
                send(frame(BODY, stream.id, piece))

        def start_response(status, headers, exc_info=None):
            if exc_info:
                try:
                    if state["sent"]:
                        raise exc_info[1].with_traceback(exc_info[2])
                finally:
                    exc_info = None
            elif state["head"] is not None:
                raise AssertionError("start_response() called twice without exc_info")
            state["head"] = (status, [[str(n), str(v)] for n, v in headers])
            return body

        result = None
        try:
            result = self.application(environ, start_response)
            for data in result:
                if data:
                    body(data)
            if not state["sent"]:
                body(b"")
            send(frame(END, stream.id))
        except ClientGone:
            send(frame(END, stream.id))
        except BaseException as error:
            if isinstance(error, (KeyboardInterrupt, SystemExit, EOFError)):
                raise
            log_exception(f"{environ.get('REQUEST_METHOD')} {environ.get('REQUEST_URI')}: the application failed")
            message = "".join(traceback.format_exception_only(type(error), error)).strip()
            send(frame(FAIL, stream.id, message.encode("utf-8", "replace")))
        finally:
            channel.done(stream)
            close = getattr(result, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:
                    log_exception("the application's iterable failed to close")


def listen(path):
    """The Unix socket the workers connect to: only the user that runs Portico may."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(128)
    return listener


class SocketHost:
    """What the WSGI and ASGI socket hosts share: a listener that stops accepting once, and a stuck
    request reported once. A host has `lock`, `listener`, `accepting`, `stuck` and `connections`,
    and says how it tells the primary (`send_stuck`) and a connection (`goaway`)."""

    def stop_accepting(self, goaway=False):
        """From any thread: no new connection, and with `goaway` the workers leave. False when it
        had stopped already."""
        with self.lock:
            if not self.accepting:
                return False
            self.accepting = False
            # shutdown() wakes the thread blocked in accept().
            try:
                self.listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.listener.close()
            connections = list(self.connections)
            self.stopped()
        # Outside the lock: a worker slow to read holds up neither the others nor their closing.
        if goaway:
            for conn in connections:
                self.goaway(conn)
        return True

    def stopped(self):
        """Under the lock, once no connection is accepted any more."""

    def report_stuck(self):
        with self.lock:
            if self.stuck:
                return
            self.stuck = True
        # The primary first: no worker's GOAWAY may delay the replacement.
        self.send_stuck()
        self.stop_accepting(goaway=True)


class WsgiHost(SocketHost):
    """Socket mode for WSGI: each connection read by a thread of its own, every request served by
    the one pool of threads. It stops accepting when stdin closes or a request is stuck (then
    every connection is told GOAWAY, so that the workers move to the process replacing this one),
    and returns once the last connection has closed."""

    def __init__(self, server, path, control):
        self.server = server
        self.listener = listen(path)
        self.control = control
        self.lock = threading.Condition()
        self.connections = set()
        self.accepting = True
        self.stuck = False

    def run(self, control_fd):
        self.server.start_threads()
        self.control.send(frame(READY, 0, json.dumps(python_info()).encode()))
        threading.Thread(target=self.accept, daemon=True).start()
        threading.Thread(target=self.watch_control, args=(control_fd,), daemon=True).start()
        with self.lock:
            while self.accepting or self.connections:
                self.lock.wait()

    def watch_control(self, fd):
        while os.read(fd, 4096):
            pass
        self.stop_accepting()

    def stopped(self):
        self.lock.notify_all()

    def goaway(self, channel):
        channel.writer.send(frame(GOAWAY, 0))

    def send_stuck(self):
        self.control.send(frame(STUCK, 0))

    def accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.serve_connection, args=(conn,), daemon=True).start()

    def serve_connection(self, conn):
        writer = Writer(conn.sendall)
        channel = Channel(conn.recv, writer, True, self.server.requests, gave_up=self.gave_up)
        with self.lock:
            if not self.accepting:
                conn.close()
                return
            self.connections.add(channel)
        writer.send(frame(READY, 0, json.dumps(python_info()).encode()))
        try:
            while True:
                channel.pump()
        except (EOFError, OSError):
            pass
        channel.gone()
        with self.lock:
            self.connections.discard(channel)
            self.lock.notify_all()
        with writer.lock:
            writer.broken = True
        conn.close()

    def gave_up(self, channel, stream):
        timer = threading.Timer(GIVE_UP, self.check_stuck, (channel, stream))
        timer.daemon = True
        timer.start()

    def check_stuck(self, channel, stream):
        if channel.still_serving(stream):
            self.report_stuck()


# ── ASGI ─────────────────────────────────────────────────────────────────────────────────────────


class AsgiStream:
    """One http or websocket scope: what Portico sent that the application has not received yet."""

    __slots__ = ("id", "conn", "events", "waiter", "credit", "credit_waiter", "consumed", "cancelled", "given_up")

    def __init__(self, stream_id, conn):
        self.id = stream_id
        self.conn = conn
        self.events = collections.deque()
        self.waiter = None
        self.credit = WINDOW
        self.credit_waiter = None
        self.consumed = 0
        self.cancelled = False
        # Its give-up is watched (socket mode).
        self.given_up = False

    def push(self, event):
        self.events.append(event)
        self.wake()

    def wake(self):
        for name in ("waiter", "credit_waiter"):
            waiter = getattr(self, name)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)


class Connection(asyncio.Protocol):
    """Stdin read and stdout written: the one channel of frames without SOCKET."""

    def __init__(self, server, out):
        self.server = server
        self.out = out
        self.buffer = bytearray()
        self.streams = {}

    def write(self, data):
        if not self.out.is_closing():
            self.out.write(data)

    def data_received(self, data):
        self.buffer += data
        for kind, stream_id, payload in split_frames(self.buffer):
            self.server.dispatch(self, kind, stream_id, payload)

    def eof_received(self):
        self.server.closed(self)

    def connection_lost(self, exc):
        self.server.closed(self)


class SocketConnection:
    """A worker's connection (socket mode), a channel of frames with stream ids of its own. The
    bridge reads and writes it itself, under `lock`, rather than through an asyncio transport, so
    that a thread can read its frames ahead of a loop an application blocks (time.sleep() in an
    `async def`) and see the CANCELs that make the process stuck."""

    def __init__(self, server, sock):
        self.server = server
        self.loop = server.loop
        self.sock = sock
        self.fd = sock.fileno()
        self.lock = threading.Lock()
        self.buffer = bytearray()
        # Frames the thread read ahead: the loop dispatches them before any it reads itself.
        self.ahead = []
        # What the socket did not take yet; the loop sends it once it can.
        self.pending = bytearray()
        self.streams = {}
        self.told = False
        self.closed = False
        sock.setblocking(False)
        self.loop.add_reader(self.fd, self.readable)

    def write(self, data):
        with self.lock:
            if self.queue(data):
                self.loop.add_writer(self.fd, self.writable)

    def queue(self, data):
        """What the socket takes of `data` sent, the rest kept (lock held); True when that starts
        a wait for the socket to take more."""
        if self.closed:
            return False
        if self.pending:
            self.pending += data
            return False
        try:
            sent = self.sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            # The worker is gone: reading says so.
            return False
        self.pending += data[sent:]
        return bool(self.pending)

    def writable(self):
        with self.lock:
            try:
                del self.pending[: self.sock.send(self.pending)]
            except BlockingIOError:
                return
            except OSError:
                self.pending.clear()
            if not self.pending:
                self.loop.remove_writer(self.fd)

    def want_write(self):
        with self.lock:
            if self.pending and not self.closed:
                self.loop.add_writer(self.fd, self.writable)

    def readable(self):
        with self.lock:
            if self.closed:
                return
            frames, self.ahead = self.ahead, []
            over = self.read(frames)
        for kind, stream_id, payload in frames:
            self.server.dispatch(self, kind, stream_id, payload)
        if over:
            self.close()

    def read(self, frames):
        """The frames the socket has, into `frames` (lock held); True once the connection is over."""
        try:
            data = self.sock.recv(262144)
        except BlockingIOError:
            return False
        except OSError:
            return True
        if not data:
            return True
        self.buffer += data
        frames += split_frames(self.buffer)
        return False

    def read_ahead(self):
        """On the server's thread: frames the loop has not read, for it to dispatch, and the
        give-ups among them watched from here. The end of the connection the loop reads itself."""
        with self.lock:
            if self.closed:
                return
            frames = []
            self.read(frames)
            self.ahead += frames
        if not frames:
            return
        self.loop.call_soon_threadsafe(self.readable)
        for kind, stream_id, payload in frames:
            stream = self.streams.get(stream_id)
            if kind == CANCEL and payload and stream is not None:
                self.server.gave_up(stream)

    def goaway(self):
        """GOAWAY, once, from the loop or from a thread."""
        with self.lock:
            if self.told:
                return
            self.told = True
            if self.queue(frame(GOAWAY, 0)):
                self.loop.call_soon_threadsafe(self.want_write)

    def close(self):
        with self.lock:
            if self.closed:
                return
            self.closed = True
        self.loop.remove_reader(self.fd)
        self.loop.remove_writer(self.fd)
        self.sock.close()
        self.server.closed(self)


class Control(asyncio.Protocol):
    """Socket mode's stdin: closed when no new connection will come."""

    def __init__(self, server):
        self.server = server

    def eof_received(self):
        self.server.stop_accepting()

    def connection_lost(self, exc):
        self.server.stop_accepting()


class AsgiServer(SocketHost):
    """Serves stdin and stdout, or with `path` every connection accepted there (see WsgiHost). In
    socket mode, threads accept the connections, read them ahead of the loop and watch the requests
    given up on: an application that blocks the loop is still found stuck and replaced."""

    def __init__(self, application, out_fd, in_file, path=None):
        self.application = application
        self.out_fd = out_fd
        # STUCK goes out from a thread, on a descriptor of its own (the transport may close its one).
        self.stuck_fd = os.dup(out_fd) if path is not None else None
        self.in_file = in_file
        self.path = path
        self.loop = None
        self.lock = threading.Lock()
        self.connections = set()
        self.listener = None
        self.accepting = True
        self.stuck = False
        self.state = {}
        self.transport = None

    def send(self, data):
        self.transport.write(data)

    async def run(self):
        loop = self.loop = asyncio.get_running_loop()
        self.finished = asyncio.Event()
        self.transport, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(self.out_fd, "wb", buffering=0))
        lifespan = Lifespan(self.application, self.state)
        failure = await lifespan.startup()
        if failure is not None:
            self.send(frame(START_FAILED, 0, json.dumps(dict(python_info(), error=failure, traceback="")).encode()))
            await self.flush()
            return 1
        if self.path is None:
            conn = Connection(self, self.transport)
            self.connections.add(conn)
            await loop.connect_read_pipe(lambda: conn, self.in_file)
        else:
            self.listener = listen(self.path)
            threading.Thread(target=self.accept, daemon=True).start()
            threading.Thread(target=self.read_ahead, daemon=True).start()
            await loop.connect_read_pipe(lambda: Control(self), self.in_file)
        self.send(frame(READY, 0, json.dumps(python_info()).encode()))
        await self.finished.wait()
        for conn in self.connections:
            for stream in conn.streams.values():
                stream.cancelled = True
                stream.wake()
        await lifespan.shutdown()
        await self.flush()
        return 0

    def accept(self):
        """A thread's, until stop_accepting() shuts the listener down."""
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            self.loop.call_soon_threadsafe(self.opened, sock)

    def read_ahead(self):
        """A thread's: see SocketConnection."""
        while True:
            time.sleep(READ_AHEAD)
            with self.lock:
                connections = list(self.connections)
            for conn in connections:
                conn.read_ahead()

    def opened(self, sock):
        with self.lock:
            if not self.accepting:
                return sock.close()
            conn = SocketConnection(self, sock)
            self.connections.add(conn)
        conn.write(frame(READY, 0, json.dumps(python_info()).encode()))

    def closed(self, conn):
        """Over stdio, the end; over a socket, that connection's streams stop."""
        if self.path is None:
            return self.finished.set()
        with self.lock:
            if conn not in self.connections:
                return
            self.connections.discard(conn)
        for stream in conn.streams.values():
            stream.cancelled = True
            stream.wake()
        self.maybe_finished()

    def maybe_finished(self):
        if not self.accepting and not self.connections:
            self.finished.set()

    def stop_accepting(self, goaway=False):
        if super().stop_accepting(goaway):
            self.loop.call_soon_threadsafe(self.maybe_finished)

    def goaway(self, conn):
        conn.goaway()

    def send_stuck(self):
        write_all(self.stuck_fd, frame(STUCK, 0))

    def gave_up(self, stream):
        """A CANCEL for a time limit (loop or read-ahead thread): the application has GIVE_UP to
        end the stream. Watched from a thread, which a blocked loop does not hold up; one timer a
        stream at most, and none once stuck."""
        with self.lock:
            if self.stuck or stream.given_up:
                return
            stream.given_up = True
        timer = threading.Timer(GIVE_UP, self.check_stuck, (stream,))
        timer.daemon = True
        timer.start()

    def check_stuck(self, stream):
        if stream.conn.streams.get(stream.id) is stream:
            self.report_stuck()

    async def flush(self):
        while self.transport.get_write_buffer_size() > 0:
            await asyncio.sleep(0.01)

    def dispatch(self, conn, kind, stream_id, payload):
        if kind == REQUEST:
            scope = json.loads(payload)
            stream = AsgiStream(stream_id, conn)
            conn.streams[stream_id] = stream
            asyncio.get_running_loop().create_task(self.serve(stream, scope))
            return
        stream = conn.streams.get(stream_id)
        if stream is None:
            return
        if kind == BODY:
            stream.push({"type": "http.request", "body": payload, "more_body": True})
        elif kind == END:
            stream.push({"type": "http.request", "body": b"", "more_body": False})
        elif kind == CANCEL:
            stream.cancelled = True
            stream.wake()
            if payload and self.path is not None:
                self.gave_up(stream)
        elif kind == CREDIT:
            stream.credit += U32.unpack(payload)[0]
            stream.wake()
        elif kind == WS_TEXT:
            stream.push({"type": "websocket.receive", "text": payload.decode("utf-8")})
        elif kind == WS_BINARY:
            stream.push({"type": "websocket.receive", "bytes": payload})
        elif kind == WS_CLOSE:
            stream.push({"type": "websocket.disconnect", "code": CLOSE.unpack_from(payload)[0]})

    async def serve(self, stream, head):
        conn = stream.conn
        websocket = head["type"] == "websocket"
        has_body = head.pop("body", False)
        scope = self.scope(head)
        response = {"started": False, "head": None, "accepted": False, "complete": False}
        if websocket:
            stream.events.append({"type": "websocket.connect"})
        elif not has_body:
            stream.events.append({"type": "http.request", "body": b"", "more_body": False})

        async def receive():
            while True:
                if stream.events:
                    event = stream.events.popleft()
                    data = event.get("body") or event.get("bytes") or event.get("text")
                    if data:
                        self.consumed(stream, len(data))
                    return event
                if stream.cancelled or response["complete"]:
                    if websocket:
                        return {"type": "websocket.disconnect", "code": 1006}
                    return {"type": "http.disconnect"}
                stream.waiter = asyncio.get_running_loop().create_future()
                await stream.waiter
                stream.waiter = None

        async def send(message):
            kind = message["type"]
            if stream.cancelled:
                raise ClientGone("the client went away")
            if kind == "http.response.start":
                if response["head"] is not None:
                    raise RuntimeError("http.response.start sent twice")
                response["head"] = {
                    "status": int(message["status"]),
                    "headers": [[n.decode("latin-1"), v.decode("latin-1")] for n, v in message.get("headers", [])],
                }
            elif kind == "http.response.body":
                if response["head"] is None:
                    raise RuntimeError("http.response.body sent before http.response.start")
                if response["complete"]:
                    raise RuntimeError("http.response.body sent after the response was complete")
                data = bytes(message.get("body", b""))
                more = message.get("more_body", False)
                out = b""
                if not response["started"]:
                    response["started"] = True
                    first, data = data[:PIECE], data[PIECE:]
                    stream.credit -= len(first)
                    out = frame(START, stream.id, json.dumps(response["head"]).encode())
                    out += frame(BODY, stream.id, first) if first else b""
                for at in range(0, len(data), PIECE):
                    if out:
                        conn.write(out)
                    await self.credit(stream)
                    piece = data[at : at + PIECE]
                    stream.credit -= len(piece)
                    out = frame(BODY, stream.id, piece)
                if not more:
                    response["complete"] = True
                    out += frame(END, stream.id)
                    stream.wake()
                if out:
                    conn.write(out)
            elif kind == "websocket.accept":
                response["accepted"] = True
                accept = {
                    "subprotocol": message.get("subprotocol"),
                    "headers": [[n.decode("latin-1"), v.decode("latin-1")] for n, v in message.get("headers", [])],
                }
                conn.write(frame(WS_ACCEPT, stream.id, json.dumps(accept).encode()))
            elif kind == "websocket.send":
                if not response["accepted"]:
                    raise RuntimeError("websocket.send before websocket.accept")
                await self.credit(stream)
                text = message.get("text") is not None
                data = message["text"].encode("utf-8") if text else bytes(message.get("bytes") or b"")
                if len(data) > MAX_MESSAGE:
                    raise ValueError(f"a WebSocket message of {len(data)} bytes (at most {MAX_MESSAGE})")
                stream.credit -= len(data)
                conn.write(frame(WS_TEXT if text else WS_BINARY, stream.id, data))
            elif kind == "websocket.close":
                reason = (message.get("reason") or "").encode("utf-8")
                response["complete"] = True
                conn.write(frame(WS_CLOSE, stream.id, CLOSE.pack(int(message.get("code", 1000))) + reason))
                stream.wake()
            else:
                raise RuntimeError(f"unknown ASGI message type {kind!r}")

        try:
            await self.application(scope, receive, send)
            if websocket:
                if not response["complete"] and not stream.cancelled and response["accepted"]:
                    conn.write(frame(WS_CLOSE, stream.id, CLOSE.pack(1000)))
                # The WebSocket is over once its application has returned.
                conn.write(frame(END, stream.id))
            elif not response["complete"] and not stream.cancelled:
                if response["started"]:
                    raise RuntimeError("the application returned before the response was complete")
                raise RuntimeError("the application returned without a response")
            elif not response["complete"]:
                conn.write(frame(END, stream.id))
        except ClientGone:
            conn.write(frame(END, stream.id))
        except Exception as error:
            if not stream.cancelled:
                log_exception(f"{scope.get('method', 'WEBSOCKET')} {head.get('target')}: the application failed")
            message = "".join(traceback.format_exception_only(type(error), error)).strip()
            conn.write(frame(FAIL, stream.id, message.encode("utf-8", "replace")))
        finally:
            conn.streams.pop(stream.id, None)

    def consumed(self, stream, length):
        stream.consumed += length
        if stream.consumed >= CREDIT_STEP:
            stream.conn.write(frame(CREDIT, stream.id, U32.pack(stream.consumed)))
            stream.consumed = 0

    async def credit(self, stream):
        while stream.credit <= 0:
            if stream.cancelled:
                raise ClientGone("the client went away")
            stream.credit_waiter = asyncio.get_running_loop().create_future()
            await stream.credit_waiter
            stream.credit_waiter = None
        if stream.cancelled:
            raise ClientGone("the client went away")

    def scope(self, head):
        enc = lambda s: s.encode("latin-1")
        scope = {
            "type": head["type"],
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": head["http_version"],
            "scheme": head["scheme"],
            "path": head["path"],
            "raw_path": enc(head["raw_path"]),
            "query_string": enc(head["query_string"]),
            "root_path": head["root_path"],
            "headers": [(enc(n), enc(v)) for n, v in head["headers"]],
            "client": tuple(head["client"]),
            "server": tuple(head["server"]),
            "state": dict(self.state),
            "extensions": {},
        }
        if head["type"] == "http":
            scope["method"] = head["method"]
        else:
            scope["subprotocols"] = head.get("subprotocols", [])
        return scope


class Lifespan:
    """The lifespan scope: startup before READY, shutdown when Portico ends the process."""

    def __init__(self, application, state):
        self.application = application
        self.state = state
        self.inbox = asyncio.Queue()
        self.replies = asyncio.Queue()
        self.task = None
        self.supported = True

    async def startup(self):
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": self.state}
        self.task = asyncio.get_running_loop().create_task(self.run(scope))
        await self.inbox.put({"type": "lifespan.startup"})
        reply = await self.replies.get()
        if reply is None:
            self.supported = False
            return None
        if reply["type"] == "lifespan.startup.failed":
            return reply.get("message") or "lifespan startup failed"
        return None

    async def run(self, scope):
        try:
            await self.application(scope, self.inbox.get, self.replies.put)
        except Exception:
            # ASGI lifespan: an application that raises here does not support the scope.
            if self.replies.empty():
                sys.stderr.write("the ASGI application does not support the lifespan scope; going on without it\n")
        await self.replies.put(None)

    async def shutdown(self):
        if not self.supported or self.task is None or self.task.done():
            return
        await self.inbox.put({"type": "lifespan.shutdown"})
        try:
            reply = await asyncio.wait_for(self.replies.get(), 10)
        except asyncio.TimeoutError:
            sys.stderr.write("the ASGI application's lifespan shutdown took more than 10 s\n")
            return
        if reply is not None and reply["type"] == "lifespan.shutdown.failed":
            sys.stderr.write(f"lifespan shutdown failed: {reply.get('message', '')}\n")


# ── start ────────────────────────────────────────────────────────────────────────────────────────


def main():
    mode, application_path, clear, threads = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
    path = sys.argv[5] if len(sys.argv) > 5 else None
    # The frames keep the original descriptors; the application's print() and input() get the
    # error log and nothing.
    in_fd, out_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout.reconfigure(line_buffering=True)
    sys.stderr.reconfigure(line_buffering=True)
    writer = fd_writer(out_fd)
    if mode == "wsgid" and path is not None:
        # Each wsgid process is one worker's own: one request at a time, from one channel.
        error = "wsgid serves over stdin and stdout only; SOCKET is for wsgi and asgi"
        writer.send(frame(START_FAILED, 0, json.dumps(dict(python_info(), error=error, traceback="")).encode()))
        return 1
    try:
        application = load_application(application_path, clear)
    except BaseException as error:
        writer.send(frame(START_FAILED, 0, json.dumps(start_failure(error)).encode()))
        return 1
    if mode == "asgi":
        return asyncio.run(AsgiServer(application, out_fd, os.fdopen(in_fd, "rb", buffering=0), path).run())
    threaded = mode == "wsgi"
    if path is not None:
        WsgiHost(WsgiServer(application, queue.SimpleQueue(), True, threads), path, writer).run(in_fd)
        return 0
    read = lambda size: os.read(in_fd, size)
    if threaded:
        server = WsgiServer(application, queue.SimpleQueue(), True, threads)
        channel = Channel(read, writer, True, server.requests, fd=in_fd)
        server.start_threads()
    else:
        server = WsgiServer(application, collections.deque(), False, 1)
        channel = Channel(read, writer, False, server.requests, fd=in_fd)
    writer.send(frame(READY, 0, json.dumps(python_info()).encode()))
    try:
        if threaded:
            while True:
                channel.pump()
        else:
            server.run_single(channel)
    except EOFError:
        pass
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Threads still serving (a request Portico gave up on) do not hold the process.
    os._exit(code)
