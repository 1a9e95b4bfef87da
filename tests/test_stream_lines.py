"""A line of an event stream that never ends: the SSE decoder holds at most
MAX_LINE_CHARS of it, and the run ends with one error line instead of growing."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from agentcli.providers import sse
from tests.conftest import RunCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer
from tests.sse_server import Raw


def test_the_decoder_refuses_a_line_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sse, "MAX_LINE_CHARS", 100_000)
    decoder = sse.SSEDecoder()
    assert decoder.decode('data: {"a": 1}\n\n') == [sse.SSEMessage("message", '{"a": 1}')]
    for _ in range(24):  # 98,304 characters: still one line that may end
        assert decoder.decode("x" * 4096) == []
    with pytest.raises(sse.LineTooLong, match="not ended"):
        decoder.decode("x" * 4096)


def endless_line() -> Iterator[Raw]:
    body = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [
            {"index": 0, "delta": {"role": "assistant", "content": "a"}, "finish_reason": None}
        ],
    }
    yield Raw(f"data: {json.dumps(body)}\n\n")
    yield Raw('data: {"choices": [{"index": 0, "delta": {"content": "')
    while True:
        yield Raw("x" * 65536)  # and never a line end


def test_a_server_that_never_ends_a_line_is_one_error(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(Reply(kind="stream", steps=endless_line(), ending="abort"))  # type: ignore[arg-type]
    result = run_cli(["run", "hi"], server=server, timeout=60)
    assert result.returncode == 1
    assert_one_error(result, "16,777,216 characters", "stopped reading the stream")
