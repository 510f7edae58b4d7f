"""A batch's frame, built once for every socket, is the frame a WebSocket client reads."""

import pytest
from websockets.frames import Frame, Opcode
from websockets.streams import StreamReader

from threads.socket_frames import daphne_protocol, text_frame


def parsed(raw: bytes) -> Frame:
    reader = StreamReader()
    reader.feed_data(raw)
    reader.feed_eof()
    parser = Frame.parse(reader.read_exact, mask=False, max_size=None)
    try:
        next(parser)
    except StopIteration as done:
        return done.value
    raise AssertionError("the frame was cut short")


@pytest.mark.parametrize("size", [0, 1, 125, 126, 65_535, 65_536, 300_000])
def test_a_built_frame_reads_back_as_one_final_text_message(size):
    text = ("é" * size)[:size] if size < 1000 else "x" * size
    frame = parsed(text_frame(text.encode()))
    assert frame.opcode == Opcode.TEXT and frame.fin and not frame.rsv1
    assert frame.data.decode() == text


def test_a_send_that_is_not_daphnes_has_no_socket_to_write_to():
    async def send(message):  # the test communicator's, or any other server's
        return None

    assert daphne_protocol(send) is None
