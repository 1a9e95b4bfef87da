"""SSE decoding and retry timing."""

from __future__ import annotations

import time
from email.utils import formatdate

from hypothesis import given
from hypothesis import strategies as st

from agentcli.providers.retry import backoff_delay, is_retryable_status, server_hint
from agentcli.providers.sse import SSEDecoder, SSEMessage
from tests.scripted_server import cut_at


def decode(lines: list[str]) -> list[SSEMessage]:
    decoder = SSEDecoder()
    out = [m for line in lines if (m := decoder.feed(line)) is not None]
    tail = decoder.flush()
    return out + ([tail] if tail else [])


def test_data_lines_end_at_blank_line_and_comments_are_dropped():
    messages = decode([": keep-alive", 'data: {"a": 1}', "", ":", "data: [DONE]", ""])
    assert messages == [SSEMessage("message", '{"a": 1}'), SSEMessage("message", "[DONE]")]


def test_named_events_multiline_data_and_crlf():
    messages = decode(["event: ping\r", "data: one\r", "data:two\r", "\r"])
    assert messages == [SSEMessage("ping", "one\ntwo")]


def test_message_without_final_blank_line_is_flushed():
    assert decode(["data: last"]) == [SSEMessage("message", "last")]


BODY = (
    ": keep-alive\r\n"
    'data: {"text": "a line\u2028separator, a next line\u0085and a form feed\x0c"}\r\n\r\n'
    "event: ping\rdata: one\rdata:two\r\r"
    "event: lonely\n\n"  # a name without data: dispatches nothing, and is forgotten
    "data: last\n\n"
    "data: unended"
)
MESSAGES = [
    SSEMessage(
        "message", '{"text": "a line\u2028separator, a next line\u0085and a form feed\x0c"}'
    ),
    SSEMessage("ping", "one\ntwo"),
    SSEMessage("message", "last"),
    SSEMessage("message", "unended"),
]


@given(st.lists(st.integers(1, len(BODY) - 1), max_size=40))
def test_the_body_decodes_the_same_cut_anywhere(cuts: list[int]):
    """Lines end at CR LF, LF or CR only: U+2028 and NEL inside JSON are data (httpx's
    aiter_lines would split there), and a CR LF cut in two is one line end."""
    decoder = SSEDecoder()
    messages = [m for piece in cut_at(BODY, cuts) for m in decoder.decode(piece)]
    tail = decoder.flush()
    assert [*messages, *([tail] if tail else [])] == MESSAGES


def test_retryable_statuses():
    assert all(is_retryable_status(s) for s in (408, 409, 429, 500, 502, 503, 529))
    assert not any(is_retryable_status(s) for s in (400, 401, 403, 404, 422))


def test_server_hints_in_order_of_precedence():
    assert server_hint({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert server_hint({"retry-after": "2"}) == 2.0
    date = formatdate(time.time() + 30, usegmt=True)
    hint = server_hint({"retry-after": date})
    assert hint is not None and 25 < hint <= 31
    assert server_hint({"retry-after": "soon"}) is None
    assert server_hint({}) is None


def test_backoff_honours_sane_hints_and_otherwise_grows_with_jitter():
    assert backoff_delay(0, {"retry-after": "2"}) == 2.0
    assert backoff_delay(0, {"retry-after": "3600"}) <= 0.5  # absurd hint: own backoff
    for n, ceiling in [(0, 0.5), (1, 1.0), (2, 2.0), (5, 8.0), (9, 8.0)]:
        delay = backoff_delay(n)
        assert 0.75 * ceiling <= delay <= ceiling
