"""One WebSocket frame, built once, written to many sockets of this Daphne.

A live batch goes to every viewer of a thread alike (``threads.tail_hub``). Through the
framework, each socket's frame costs a consumer ``send``, Channels' session wrapper,
Daphne's ``handle_reply``, autobahn's frame building and Twisted's deferred write (the
socket registered with the loop's selector, written on a later turn, unregistered): about
60 µs of the event loop per socket. Here the frame's bytes are built once per batch and,
for a socket in the plain state (open, no message being sent, no compression, nothing
buffered), handed to the kernel at once with one ``send``; bytes the kernel doesn't take
go to Twisted's buffer, which writes them as usual.

Anything else — a socket still connecting or closing, a frame already buffered, a server
other than Daphne (the test communicator), TLS terminated in Daphne — answers False, and
the caller sends through the framework as before. Only unmasked server frames are written
(RFC 6455 §5.2), the same bytes autobahn writes for an uncompressed text message.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable

FrameWriter = Callable[[bytes], bool]


def text_frame(payload: bytes) -> bytes:
    """A final, unmasked text frame holding ``payload``."""
    size = len(payload)
    if size < 126:
        return bytes((0x81, size)) + payload
    if size < 1 << 16:
        return struct.pack("!BBH", 0x81, 126, size) + payload
    return struct.pack("!BBQ", 0x81, 127, size) + payload


def daphne_protocol(send):
    """The Daphne protocol behind an ASGI ``send`` (through Channels' session wrapper and
    wrappers that name what they wrap as ``inner``), or None when it is not Daphne's."""
    for _ in range(6):
        if isinstance(send, functools.partial):
            if getattr(send.func, "__name__", "") == "handle_reply" and send.args:
                return send.args[0]
            return None
        inner = getattr(send, "inner", None)  # ops.asgi's counting wrapper
        if inner is None:  # channels.sessions.InstanceSessionWrapper.send
            inner = getattr(getattr(send, "__self__", None), "real_send", None)
        if inner is None:
            return None
        send = inner
    return None


def writer_for(send) -> FrameWriter | None:
    """A function writing a built frame to the socket behind ``send``: True once the frame
    is the socket's (on the wire or in its buffer), False when the caller must send it
    through the framework. None when there is no such socket."""
    protocol = daphne_protocol(send)
    if protocol is None or not hasattr(protocol, "send_state"):
        return None
    transport = getattr(protocol, "transport", None)
    sock = getattr(transport, "socket", None)
    if sock is None or getattr(transport, "TLS", True):
        return None
    open_, ground = protocol.STATE_OPEN, protocol.SEND_STATE_GROUND

    def write(frame: bytes) -> bool:
        try:
            return _write(frame)
        except AttributeError:  # a Daphne/autobahn/Twisted whose insides moved: the framework
            return False

    def _write(frame: bytes) -> bool:
        if (
            protocol.state != open_
            or protocol.send_state != ground
            or protocol._perMessageCompress is not None
            or protocol.send_queue
            or 0 < protocol.autoFragmentSize < len(frame)
            or 0 < protocol.maxMessagePayloadSize < len(frame)
            or transport.disconnecting
            or transport.disconnected
        ):
            return False
        if transport.dataBuffer or transport._tempDataBuffer:
            if transport._isSendBufferFull():
                return False  # a slow reader: the framework's path bounds it (1013)
            transport.write(frame)  # behind what is buffered, in order
            return True
        try:
            sent = sock.send(frame)
        except BlockingIOError:
            sent = 0
        except OSError:
            return False  # gone: the framework's path notices and closes
        if sent < len(frame):
            transport.write(frame[sent:])
        return True

    return write
