"""The streams benchmark's bare-socket HTTP client reads whatever framing a server sends."""

import socket
import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.streams import Conn

RESPONSES = (
    b"HTTP/1.1 204 No Content\r\nStream-Next-Offset: 0001\r\n\r\n"
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nStream-Up-To-Date: true\r\n\r\nhello"
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"3\r\nabc\r\n4;ext=1\r\ndefg\r\n0\r\nX-Trailer: t\r\n\r\n"
    b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nStream-Next-Offset: 0002\r\n\r\n"
)


def serve(server: socket.socket, pieces: list[bytes]) -> None:
    server.recv(65_536)  # whatever was asked; the answers are canned
    for piece in pieces:
        server.sendall(piece)


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in zip(points, points[1:], strict=False)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0), max_size=12))
def test_responses_parse_however_the_bytes_are_split(cuts):
    client_end, server_end = socket.socketpair()
    conn = Conn.__new__(Conn)
    conn.sock, conn.host, conn.prefix, conn.buffer = client_end, b"Host: t\r\n", "", b""
    server = threading.Thread(target=serve, args=(server_end, split(RESPONSES, cuts)))
    server.start()
    try:
        conn.sock.sendall(b"GET / HTTP/1.1\r\n\r\n")
        first = conn.read_response(head_only=False)
        second = conn.read_response(head_only=False)
        third = conn.read_response(head_only=False)
        fourth = conn.read_response(head_only=True)  # a HEAD answer has no body
    finally:
        server.join()
        client_end.close()
        server_end.close()
    assert (first.status, first.body, first.getheader("stream-next-offset")) == (204, b"", "0001")
    assert (second.body, second.getheader("Stream-Up-To-Date")) == (b"hello", "true")
    assert third.body == b"abcdefg"
    assert (fourth.status, fourth.body, fourth.getheader("Stream-Next-Offset")) == (
        200,
        b"",
        "0002",
    )
    assert conn.buffer == b""
