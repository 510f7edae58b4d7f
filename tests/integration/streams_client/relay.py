"""A loopback TCP relay that can lose a response: the request reaches the server, the
answer never reaches the client. The failure an idempotent producer exists for."""

import contextlib
import socket
import threading
from collections.abc import Iterator

from tests.peers.ports import free_port


class DroppingRelay:
    """Relays ``127.0.0.1:<port>`` to ``upstream``; the first ``drops`` connections carry one
    request each to the server, wait for its answer, then close without passing it on."""

    def __init__(self, upstream_port: int, drops: int = 1):
        self.upstream_port = upstream_port
        self.drops = drops
        self.dropped = 0
        self.port = free_port()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._closing = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closing:
            try:
                downstream, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            if self.dropped < self.drops:
                self.dropped += 1
                threading.Thread(
                    target=self._drop, args=(downstream, upstream), daemon=True
                ).start()
            else:
                for src, dst in ((downstream, upstream), (upstream, downstream)):
                    threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    @staticmethod
    def _read_head(sock: socket.socket) -> bytes:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        return data

    def _drop(self, downstream: socket.socket, upstream: socket.socket) -> None:
        with downstream, upstream:
            request = self._read_head(downstream)
            head, _, body = request.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                key, _, value = line.partition(b":")
                if key.strip().lower() == b"content-length":
                    length = int(value)
            while len(body) < length:
                body += downstream.recv(65536)
            upstream.sendall(head + b"\r\n\r\n" + body)
            self._read_head(upstream)  # the server has answered: the append happened
            downstream.shutdown(socket.SHUT_RDWR)

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := src.recv(65536):
                dst.sendall(chunk)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self._closing = True
        self._listener.close()


@contextlib.contextmanager
def dropping_relay(upstream_url: str, drops: int = 1) -> Iterator[DroppingRelay]:
    relay = DroppingRelay(int(upstream_url.rsplit(":", 1)[1]), drops)
    try:
        yield relay
    finally:
        relay.close()
