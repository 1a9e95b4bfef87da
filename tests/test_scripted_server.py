"""Tests of the scripted Chat Completions server itself: the bytes it puts on the wire."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.scripted_server import NO_REPLY_MESSAGE, Reply, ScriptedServer


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as srv:
        yield srv
    assert srv.errors == []  # no unexpected exception inside the server


@pytest.fixture
def client(server: ScriptedServer) -> Iterator[httpx.Client]:
    # trust_env=False: a proxy from the environment must not intercept 127.0.0.1.
    with httpx.Client(base_url=server.base_url, timeout=5.0, trust_env=False) as c:
        yield c


def _body(include_usage: bool = False, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "test-model", "stream": True, "messages": [], **extra}
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    return body


def _lines(client: httpx.Client, body: dict[str, Any] | None = None) -> list[str]:
    """All body lines of one streamed chat request (blank separator lines dropped)."""
    with client.stream("POST", "/chat/completions", json=body or _body()) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        return [line for line in response.iter_lines() if line]


def _chunks(lines: list[str]) -> list[dict[str, Any]]:
    """The parsed JSON payloads of the ``data:`` lines, minus ``[DONE]``."""
    payloads = [line.removeprefix("data: ") for line in lines if line.startswith("data: ")]
    return [json.loads(p) for p in payloads if p != "[DONE]"]


def _tool_entries(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        tc for c in chunks if c["choices"] for tc in c["choices"][0]["delta"].get("tool_calls", [])
    ]


def _finish_reasons(chunks: list[dict[str, Any]]) -> list[str]:
    reasons = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    return [r for r in reasons if r is not None]


# --- text ---


def test_text_stream_lines_in_order(server: ScriptedServer, client: httpx.Client) -> None:
    server.enqueue(Reply.text(["Hel", "lo"]))
    lines = _lines(client)

    assert lines[-1] == "data: [DONE]"
    assert all(line.startswith("data: ") for line in lines)
    chunks = _chunks(lines)
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert deltas == [{"role": "assistant", "content": "Hel"}, {"content": "lo"}, {}]
    assert _finish_reasons(chunks) == ["stop"]
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None, None, "stop"]
    # Real chunk objects, one id per stream, echoing the requested model.
    assert {c["id"] for c in chunks} == {chunks[0]["id"]}
    assert chunks[0]["id"].startswith("chatcmpl-")
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert all(c["model"] == "test-model" and isinstance(c["created"], int) for c in chunks)


@pytest.mark.parametrize("include_usage", [True, False])
def test_usage_chunk_only_when_requested(
    server: ScriptedServer, client: httpx.Client, include_usage: bool
) -> None:
    server.enqueue(Reply.text(["hi"], usage=(7, 3)))
    chunks = _chunks(_lines(client, _body(include_usage=include_usage)))

    usage_chunks = [c for c in chunks if "usage" in c]
    if include_usage:
        assert usage_chunks == [chunks[-1]]
        assert chunks[-1]["choices"] == []
        assert chunks[-1]["usage"] == {
            "prompt_tokens": 7,
            "completion_tokens": 3,
            "total_tokens": 10,
        }
    else:
        assert usage_chunks == []


def test_text_options_keepalive_no_done_no_usage(
    server: ScriptedServer, client: httpx.Client
) -> None:
    server.enqueue(Reply.text(["a", "b"], keepalive=True, done=False, usage=None))
    lines = _lines(client, _body(include_usage=True))

    assert lines[1] == ": keep-alive"
    assert "data: [DONE]" not in lines
    assert all("usage" not in c for c in _chunks(lines))


# --- tool calls ---

# Far longer than reading a line takes on any load: a piece read before it is a piece
# read as it arrived, not at the end of the stream.
SECOND_PIECE_AFTER = 3.0

CALLS = [
    {"name": "read_file", "arguments": {"path": "src/main.py"}, "id": "call_a"},
    {"name": "list_dir", "arguments": {"path": "."}, "id": "call_b"},
]


def _tool_chunks(server: ScriptedServer, client: httpx.Client, reply: Reply) -> list[dict]:
    server.enqueue(reply)
    lines = _lines(client)
    assert lines[-1] == "data: [DONE]"
    return _chunks(lines)


def _assemble(entries: list[dict[str, Any]]) -> dict[int, str]:
    """Arguments per index, concatenated the way a spec-following client does."""
    args: dict[int, str] = {}
    for entry in entries:
        args[entry["index"]] = args.get(entry["index"], "") + entry["function"].get("arguments", "")
    return args


def test_tool_calls_canonical(server: ScriptedServer, client: httpx.Client) -> None:
    chunks = _tool_chunks(server, client, Reply.tool_calls(CALLS, fragment=5))
    entries = _tool_entries(chunks)

    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    heads = [e for e in entries if "id" in e]
    assert heads == [
        {
            "index": 0,
            "id": "call_a",
            "type": "function",
            "function": {"name": "read_file", "arguments": ""},
        },
        {
            "index": 1,
            "id": "call_b",
            "type": "function",
            "function": {"name": "list_dir", "arguments": ""},
        },
    ]
    fragments = [e for e in entries if "id" not in e]
    assert all(
        set(f) == {"index", "function"} and set(f["function"]) == {"arguments"} for f in fragments
    )
    assert all(len(f["function"]["arguments"]) <= 5 for f in fragments)
    # Calls are sequential: all of call 0, then all of call 1.
    indexes = [e["index"] for e in entries]
    assert indexes == sorted(indexes)
    assert {i: json.loads(a) for i, a in _assemble(entries).items()} == {
        0: {"path": "src/main.py"},
        1: {"path": "."},
    }
    assert _finish_reasons(chunks) == ["tool_calls"]


def test_tool_calls_parallel_interleaved(server: ScriptedServer, client: httpx.Client) -> None:
    reply = Reply.tool_calls(CALLS, style="parallel_interleaved", fragment=4)
    entries = _tool_entries(_tool_chunks(server, client, reply))

    # Both heads, then fragments alternating between the calls while both have some left.
    assert [e["index"] for e in entries[:6]] == [0, 1, 0, 1, 0, 1]
    assert [e.get("id") for e in entries[:2]] == ["call_a", "call_b"]
    assert {i: json.loads(a) for i, a in _assemble(entries).items()} == {
        0: {"path": "src/main.py"},
        1: {"path": "."},
    }


def test_tool_calls_ollama_same_index(server: ScriptedServer, client: httpx.Client) -> None:
    chunks = _tool_chunks(server, client, Reply.tool_calls(CALLS, style="ollama_same_index"))
    entries = _tool_entries(chunks)

    assert [e["index"] for e in entries] == [0, 0]
    assert [e["id"] for e in entries] == ["call_a", "call_b"]
    assert [json.loads(e["function"]["arguments"]) for e in entries] == [
        {"path": "src/main.py"},
        {"path": "."},
    ]
    assert _finish_reasons(chunks) == ["stop"]


def test_tool_calls_no_index(server: ScriptedServer, client: httpx.Client) -> None:
    chunks = _tool_chunks(server, client, Reply.tool_calls(CALLS, style="no_index"))
    entries = _tool_entries(chunks)

    assert all("index" not in e for e in entries)
    assert [e["id"] for e in entries] == ["call_a", "call_b"]
    assert _finish_reasons(chunks) == ["stop"]


def test_tool_calls_whole(server: ScriptedServer, client: httpx.Client) -> None:
    chunks = _tool_chunks(server, client, Reply.tool_calls(CALLS, style="whole"))
    entries = _tool_entries(chunks)

    assert entries == [
        {
            "index": 0,
            "id": "call_a",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "src/main.py"}'},
        },
        {
            "index": 1,
            "id": "call_b",
            "type": "function",
            "function": {"name": "list_dir", "arguments": '{"path": "."}'},
        },
    ]
    assert _finish_reasons(chunks) == ["tool_calls"]


def test_tool_calls_vllm_no_id(server: ScriptedServer, client: httpx.Client) -> None:
    calls = [{"name": "read_file", "arguments": {"path": "a"}}, {"name": "now", "arguments": None}]
    reply = Reply.tool_calls(calls, style="vllm_no_id")
    entries = _tool_entries(_tool_chunks(server, client, reply))

    assert all("id" not in e for e in entries)
    names = [e["function"]["name"] for e in entries if "name" in e["function"]]
    assert names == ["read_file", "now"]
    name_only = [e for e in entries if e["index"] == 1]
    assert name_only == [{"index": 1, "type": "function", "function": {"name": "now"}}]
    assert json.loads(_assemble(entries)[0]) == {"path": "a"}


def test_tool_calls_args_object(server: ScriptedServer, client: httpx.Client) -> None:
    calls = [*CALLS, {"name": "stat", "arguments": '{"path": "b"}', "id": "call_c"}]
    reply = Reply.tool_calls(calls, style="args_object")
    entries = _tool_entries(_tool_chunks(server, client, reply))

    assert [e["function"]["arguments"] for e in entries] == [
        {"path": "src/main.py"},
        {"path": "."},
        {"path": "b"},
    ]


def test_tool_calls_malformed_string_args_are_verbatim(
    server: ScriptedServer, client: httpx.Client
) -> None:
    reply = Reply.tool_calls([{"name": "read_file", "arguments": '{"path": "a.txt"'}])
    entries = _tool_entries(_tool_chunks(server, client, reply))

    assert _assemble(entries) == {0: '{"path": "a.txt"'}
    assert entries[0]["id"].startswith("call_")  # generated when not given


def test_tool_calls_text_before(server: ScriptedServer, client: httpx.Client) -> None:
    reply = Reply.tool_calls(CALLS[:1], text_before=["Let me ", "look."], style="whole")
    chunks = _tool_chunks(server, client, reply)
    deltas = [c["choices"][0]["delta"] for c in chunks]

    assert deltas[0] == {"role": "assistant", "content": "Let me "}
    assert deltas[1] == {"content": "look."}
    assert deltas[2]["tool_calls"][0]["function"]["name"] == "read_file"


def test_tool_calls_generated_ids_are_distinct() -> None:
    calls = [{"name": "a"}, {"name": "b"}]
    first, second = Reply.tool_calls(calls, style="whole"), Reply.tool_calls(calls, style="whole")
    ids = [
        step.delta["tool_calls"][0]["id"]
        for reply in (first, second)
        for step in reply.steps
        if "tool_calls" in getattr(step, "delta", {})
    ]
    assert len(set(ids)) == 4


# --- errors and broken streams ---


def test_error_reply_status_headers_body(server: ScriptedServer, client: httpx.Client) -> None:
    server.enqueue(Reply.error(429, "slow down", headers={"Retry-After": "1"}))
    response = client.post("/chat/completions", json=_body())

    assert response.status_code == 429
    assert response.headers["retry-after"] == "1"
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {
        "error": {"message": "slow down", "type": "rate_limit_error", "param": None, "code": None}
    }


def test_error_reply_body_override(server: ScriptedServer, client: httpx.Client) -> None:
    server.enqueue(Reply.error(503, body="upstream unavailable", headers={"retry-after-ms": "50"}))
    response = client.post("/chat/completions", json=_body())

    assert response.status_code == 503
    assert response.headers["retry-after-ms"] == "50"
    assert response.text == "upstream unavailable"


def test_cut_ends_without_done_or_finish_reason(
    server: ScriptedServer, client: httpx.Client
) -> None:
    server.enqueue(Reply.cut(["par", "tial", "never"], after=2))
    lines: list[str] = []
    with (
        pytest.raises(httpx.RemoteProtocolError),
        client.stream("POST", "/chat/completions", json=_body(include_usage=True)) as response,
    ):
        lines.extend(line for line in response.iter_lines() if line)

    chunks = _chunks(lines)
    assert [c["choices"][0]["delta"].get("content") for c in chunks] == ["par", "tial"]
    assert "data: [DONE]" not in lines
    assert _finish_reasons(chunks) == []
    assert all("usage" not in c for c in chunks)


def test_cut_with_partial_event(server: ScriptedServer, client: httpx.Client) -> None:
    server.enqueue(Reply.cut(["x"], partial='data: {"id": "chatcmpl-'))
    with (
        client.stream("POST", "/chat/completions", json=_body()) as response,
        pytest.raises(httpx.RemoteProtocolError),
    ):
        response.read()


def test_stream_error_event_then_end(server: ScriptedServer, client: httpx.Client) -> None:
    error = {"message": "model crashed", "type": "server_error"}
    server.enqueue(Reply.stream_error(["so"], error=error))
    lines = _lines(client)

    assert lines[-1] == 'data: {"error":{"message":"model crashed","type":"server_error"}}'
    assert "data: [DONE]" not in lines
    assert _chunks(lines)[0]["choices"][0]["delta"] == {"role": "assistant", "content": "so"}


def test_hang_times_out_client(server: ScriptedServer, client: httpx.Client) -> None:
    server.enqueue(Reply.hang(5))
    timeout = httpx.Timeout(5.0, read=0.2)
    with (
        client.stream("POST", "/chat/completions", json=_body(), timeout=timeout) as response,
        pytest.raises(httpx.ReadTimeout),
    ):
        assert response.status_code == 200  # headers arrive, then nothing
        response.read()


def test_raw_lines_are_exact(server: ScriptedServer, client: httpx.Client) -> None:
    lines = ["data: {not json}", "", "event: ping", "data: [DONE]", ""]
    server.enqueue(Reply.raw(lines, status=201, headers={"Content-Type": "text/plain"}))
    response = client.post("/chat/completions", json=_body())

    assert response.status_code == 201
    assert response.headers["content-type"] == "text/plain"
    assert response.content == b"data: {not json}\n\nevent: ping\ndata: [DONE]\n\n"


# --- recording, routing, queue ---


def test_requests_recorded_with_body_and_headers(
    server: ScriptedServer, client: httpx.Client
) -> None:
    server.enqueue(Reply.text(["one"]), Reply.text(["two"]))
    before = time.monotonic()
    headers = {"Authorization": "Bearer sk-test", "X-Custom": "yes"}
    with httpx.Client(base_url=server.base_url, headers=headers, trust_env=False) as authed:
        _lines(authed)
    _lines(client, _body(messages=[{"role": "user", "content": "again"}]))

    assert server.wait_for_requests(2, timeout=1.0)
    first, second = server.requests
    assert first.path == "/v1/chat/completions"
    assert first.headers["authorization"] == "Bearer sk-test"
    assert first.headers["x-custom"] == "yes"
    assert first.json == _body()
    assert second.json["messages"] == [{"role": "user", "content": "again"}]
    assert before <= first.time <= second.time
    assert server.pending == 0


def test_empty_queue_is_500_and_still_recorded(
    server: ScriptedServer, client: httpx.Client
) -> None:
    response = client.post("/chat/completions", json=_body())

    assert response.status_code == 500
    assert response.json() == {"error": {"message": NO_REPLY_MESSAGE, "type": "server_error"}}
    assert len(server.requests) == 1


def test_unknown_path_is_404_and_not_recorded(server: ScriptedServer, client: httpx.Client) -> None:
    server.enqueue(Reply.text(["unused"]))
    response = client.post("/completions", json=_body())

    assert response.status_code == 404
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert server.requests == []
    assert server.pending == 1


def test_models_endpoint(client: httpx.Client) -> None:
    response = client.get("/models")

    assert response.status_code == 200
    assert response.json() == {
        "object": "list",
        "data": [{"id": "scripted-model", "object": "model"}],
    }


def test_models_listing_is_scripted_and_recorded(
    server: ScriptedServer, client: httpx.Client
) -> None:
    server.models = ["alpha", "beta"]
    response = client.get("/models", headers={"Authorization": "Bearer sk-x"})
    assert [m["id"] for m in response.json()["data"]] == ["alpha", "beta"]

    server.models_reply = Reply.error(503, "loading the model")
    failed = client.get("/models")
    assert failed.status_code == 503
    assert failed.json()["error"]["message"] == "loading the model"

    assert [r.headers.get("authorization") for r in server.listings] == ["Bearer sk-x", None]
    assert server.requests == []  # listings are not chat requests


# --- answers without streaming, and servers that cannot stream ---


def test_role_only_then_clean_end(server: ScriptedServer, client: httpx.Client) -> None:
    server.enqueue(Reply.role_only())
    lines = _lines(client, _body(include_usage=True))

    assert [c["choices"][0]["delta"] for c in _chunks(lines)] == [{"role": "assistant"}]
    assert "data: [DONE]" not in lines


def test_role_only_then_abort(server: ScriptedServer, client: httpx.Client) -> None:
    server.enqueue(Reply.role_only(ending="abort"))
    lines: list[str] = []
    with (
        pytest.raises(httpx.RemoteProtocolError),
        client.stream("POST", "/chat/completions", json=_body()) as response,
    ):
        lines.extend(line for line in response.iter_lines() if line)
    assert [c["choices"][0]["delta"] for c in _chunks(lines)] == [{"role": "assistant"}]


def test_completion_is_one_json_object(server: ScriptedServer, client: httpx.Client) -> None:
    call = {"name": "read_file", "arguments": {"path": "a"}, "id": "c1"}
    server.enqueue(Reply.completion("Hi"), Reply.completion(tool_calls=[call]))
    text = client.post("/chat/completions", json=_body(stream=False))
    calls = client.post("/chat/completions", json=_body(stream=False))

    assert text.headers["content-type"] == "application/json"
    body = text.json()
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "Hi"}
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    choice = calls.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] is None
    assert choice["message"]["tool_calls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "a"}'},
        }
    ]


def test_wait_for_requests_times_out(server: ScriptedServer) -> None:
    assert server.wait_for_requests(1, timeout=0.05) is False


# --- incremental delivery and shutdown ---


def test_first_event_arrives_before_delay_ends(
    server: ScriptedServer, client: httpx.Client
) -> None:
    server.enqueue(Reply.text(["first", "second"], delay=SECOND_PIECE_AFTER))
    start = time.monotonic()
    with client.stream("POST", "/chat/completions", json=_body()) as response:
        lines = response.iter_lines()
        first = next(line for line in lines if line)
        first_at = time.monotonic() - start
        rest = [line for line in lines if line]

    assert json.loads(first.removeprefix("data: "))["choices"][0]["delta"]["content"] == "first"
    assert first_at < SECOND_PIECE_AFTER  # read before the second piece was even sent
    assert time.monotonic() - start >= SECOND_PIECE_AFTER
    assert rest[-1] == "data: [DONE]"


def test_async_aiter_lines_sees_events_incrementally(server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["first", "second"], delay=SECOND_PIECE_AFTER))

    async def first_event_delay() -> float:
        async with httpx.AsyncClient(base_url=server.base_url, trust_env=False) as ac:
            start = time.monotonic()
            async with ac.stream("POST", "/chat/completions", json=_body()) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        return time.monotonic() - start
        raise AssertionError("no event")

    assert asyncio.run(first_event_delay()) < SECOND_PIECE_AFTER


def test_exit_is_prompt_while_reply_hangs() -> None:
    outcome: list[BaseException | int] = []
    server = ScriptedServer().start()
    server.enqueue(Reply.hang(30))

    def call() -> None:
        try:
            with httpx.Client(trust_env=False, timeout=None) as c:
                outcome.append(
                    c.post(f"{server.base_url}/chat/completions", json=_body()).status_code
                )
        except httpx.HTTPError as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    assert server.wait_for_requests(1)
    time.sleep(0.05)  # let the reply start hanging
    start = time.monotonic()
    server.stop()
    caller.join(timeout=20)

    assert time.monotonic() - start < 10  # stop woke the hanging reply
    assert not caller.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], httpx.RemoteProtocolError)
    assert server.errors == []


def _raw_exchange(server: ScriptedServer, body: dict[str, Any]) -> bytes:
    """Everything the server sends for one POST, read off a plain socket until it closes."""
    payload = json.dumps(body).encode()
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", server.port), timeout=2) as sock:
        sock.sendall(head.encode() + payload)
        received = b""
        while data := sock.recv(65536):
            received += data
    return received


def _http_chunks(body: bytes) -> tuple[list[bytes], bool]:
    """Split a chunked body into its chunks; True if it ended with the zero-length chunk."""
    chunks: list[bytes] = []
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return chunks, rest == b"\r\n"
        chunks.append(rest[:size])
        assert rest[size : size + 2] == b"\r\n"
        body = rest[size + 2 :]
    return chunks, False


def test_wire_framing_one_chunk_per_event(server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["Hi"], usage=None), Reply.cut(["Hi"]))
    head, _, body = _raw_exchange(server, _body()).partition(b"\r\n\r\n")

    assert head.startswith(b"HTTP/1.1 200 ")
    assert b"Transfer-Encoding: chunked" in head
    assert b"Content-Length" not in head
    # Each SSE event is exactly one HTTP chunk; the body ends with the zero-length chunk.
    chunks, terminated = _http_chunks(body)
    assert terminated
    assert [c[:6] for c in chunks] == [b"data: "] * 3
    assert all(c.endswith(b"\n\n") and c.count(b"\n\n") == 1 for c in chunks)
    assert chunks[-1] == b"data: [DONE]\n\n"

    _, _, cut_body = _raw_exchange(server, _body()).partition(b"\r\n\r\n")
    cut_chunks, cut_terminated = _http_chunks(cut_body)
    assert len(cut_chunks) == 1 and not cut_terminated  # truncated, not ended
