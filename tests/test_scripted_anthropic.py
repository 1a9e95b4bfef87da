"""Tests of the scripted Anthropic Messages server itself: the bytes it puts on the wire."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.scripted_anthropic import (
    NO_REPLY_MESSAGE,
    UNKNOWN_EVENT,
    AReply,
    ScriptedAnthropic,
    server_tool_result_block,
    text_block,
    thinking_block,
    tool_use_block,
)


@pytest.fixture
def server() -> Iterator[ScriptedAnthropic]:
    with ScriptedAnthropic() as srv:
        yield srv
    assert srv.errors == []  # no unexpected exception inside the server


@pytest.fixture
def client(server: ScriptedAnthropic) -> Iterator[httpx.Client]:
    # trust_env=False: a proxy from the environment must not intercept 127.0.0.1.
    with httpx.Client(base_url=server.base_url, timeout=5.0, trust_env=False) as c:
        yield c


def _body(**extra: Any) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 64, "stream": True, "messages": [], **extra}


def _events(client: httpx.Client, body: dict[str, Any] | None = None) -> list[tuple[str, dict]]:
    """(event name, parsed data) for every SSE event of one streamed request, checking the
    framing: `event:` then `data:` then a blank line, and the data's type is the name."""
    with client.stream("POST", "/v1/messages", json=body or _body()) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        return _parse(list(response.iter_lines()))


def _parse(lines: list[str]) -> list[tuple[str, dict]]:
    events = []
    for start in range(0, len(lines) - (len(lines) % 3), 3):
        name_line, data_line, blank = lines[start : start + 3]
        assert name_line.startswith("event: "), lines[start : start + 3]
        assert data_line.startswith("data: "), lines[start : start + 3]
        assert blank == ""
        name, data = name_line.removeprefix("event: "), json.loads(data_line[6:])
        assert data["type"] == name
        events.append((name, data))
    return events


def _names(events: list[tuple[str, dict]]) -> list[str]:
    return [name for name, _ in events]


def _deltas(events: list[tuple[str, dict]], index: int) -> list[dict]:
    return [d["delta"] for n, d in events if n == "content_block_delta" and d["index"] == index]


def _assembled_inputs(events: list[tuple[str, dict]]) -> dict[int, str]:
    inputs: dict[int, str] = {}
    for name, data in events:
        if name == "content_block_delta" and data["delta"]["type"] == "input_json_delta":
            inputs[data["index"]] = inputs.get(data["index"], "") + data["delta"]["partial_json"]
    return inputs


# --- text ---


def test_text_stream_event_order_and_payloads(
    server: ScriptedAnthropic, client: httpx.Client
) -> None:
    server.enqueue(AReply.text(["Hel", "lo"], usage=(42, 7)))
    events = _events(client)

    assert _names(events) == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = events[0][1]["message"]
    assert start["model"] == "claude-test"  # echoes the request
    assert start["id"].startswith("msg_")
    assert start["role"] == "assistant" and start["content"] == []
    assert start["usage"]["input_tokens"] == 42
    assert events[1][1] == {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    assert _deltas(events, 0) == [
        {"type": "text_delta", "text": "Hel"},
        {"type": "text_delta", "text": "lo"},
    ]
    assert events[4][1] == {"type": "content_block_stop", "index": 0}
    delta = events[5][1]
    assert delta["delta"]["stop_reason"] == "end_turn"
    assert delta["usage"] == {"output_tokens": 7}  # cumulative total, not an increment


def test_ping_and_unknown_events(server: ScriptedAnthropic, client: httpx.Client) -> None:
    server.enqueue(AReply.text(["a", "b"], ping=True, unknown_events=True))
    events = _events(client)
    names = _names(events)

    assert names.count("ping") >= 2
    assert names.count(UNKNOWN_EVENT) >= 2
    assert names[0] == "message_start" and names[-1] == "message_stop"
    known = [n for n in names if n not in ("ping", UNKNOWN_EVENT)]
    assert known == _names(_events_of(server, client, AReply.text(["a", "b"])))


def _events_of(
    server: ScriptedAnthropic, client: httpx.Client, reply: AReply
) -> list[tuple[str, dict]]:
    server.enqueue(reply)
    return _events(client)


def test_max_tokens_stop_reason(server: ScriptedAnthropic, client: httpx.Client) -> None:
    events = _events_of(server, client, AReply.max_tokens(["cut sh"]))
    [delta] = [d for n, d in events if n == "message_delta"]
    assert delta["delta"]["stop_reason"] == "max_tokens"


def test_delay_paces_the_deltas(server: ScriptedAnthropic, client: httpx.Client) -> None:
    server.enqueue(AReply.text(["a", "b", "c"], delay=0.1))
    arrivals = []
    with client.stream("POST", "/v1/messages", json=_body()) as response:
        for line in response.iter_lines():
            if line.startswith("data: ") and "text_delta" in line:
                arrivals.append(time.monotonic())
    assert len(arrivals) == 3
    assert arrivals[2] - arrivals[0] >= 0.15  # flushed per event, not buffered to the end


# --- tool use ---


def test_tool_use_blocks_stream_input_json_fragments(
    server: ScriptedAnthropic, client: httpx.Client
) -> None:
    calls = [
        {"name": "read_file", "input": {"path": "src/main.py"}, "id": "toolu_a"},
        {"name": "list_directory", "input": {"path": "."}, "id": "toolu_b"},
    ]
    events = _events_of(server, client, AReply.tool_use(calls, text_before="Look.", fragment=5))

    starts = [d for n, d in events if n == "content_block_start"]
    assert [s["index"] for s in starts] == [0, 1, 2]
    assert starts[0]["content_block"]["type"] == "text"
    assert starts[1]["content_block"] == {
        "type": "tool_use",
        "id": "toolu_a",
        "name": "read_file",
        "input": {},
    }
    assert starts[2]["content_block"]["id"] == "toolu_b"
    fragments = _deltas(events, 1)
    assert len(fragments) > 1
    assert all(f["type"] == "input_json_delta" and len(f["partial_json"]) <= 5 for f in fragments)
    inputs = _assembled_inputs(events)
    assert {i: json.loads(text) for i, text in inputs.items()} == {
        1: {"path": "src/main.py"},
        2: {"path": "."},
    }
    # Blocks do not interleave: each one stops before the next starts.
    names = _names(events)
    assert names.index("content_block_stop") < names.index("content_block_start", 2)
    [delta] = [d for n, d in events if n == "message_delta"]
    assert delta["delta"]["stop_reason"] == "tool_use"


def test_tool_use_malformed_input_is_verbatim_and_ids_are_generated(
    server: ScriptedAnthropic, client: httpx.Client
) -> None:
    reply = AReply.tool_use([{"name": "read_file", "input": '{"path": "a.txt"'}, {"name": "x"}])
    events = _events_of(server, client, reply)

    assert _assembled_inputs(events) == {0: '{"path": "a.txt"'}
    ids = [d["content_block"]["id"] for n, d in events if n == "content_block_start"]
    assert len(set(ids)) == 2 and all(i.startswith("toolu_") for i in ids)
    assert _deltas(events, 1) == []  # no input at all: no deltas


# --- thinking and server tools ---


@pytest.mark.parametrize("style", ["option", "wrapper"])
def test_thinking_block_precedes_the_answer(
    server: ScriptedAnthropic, client: httpx.Client, style: str
) -> None:
    if style == "option":
        reply = AReply.text(["Answer."], thinking=["Let me ", "think."], signature="sig-1")
    else:
        reply = AReply.thinking(["Let me ", "think."], "sig-1", then=AReply.text(["Answer."]))
    events = _events_of(server, client, reply)

    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert starts == [{"type": "thinking", "thinking": ""}, {"type": "text", "text": ""}]
    assert _deltas(events, 0) == [
        {"type": "thinking_delta", "thinking": "Let me "},
        {"type": "thinking_delta", "thinking": "think."},
        {"type": "signature_delta", "signature": "sig-1"},
    ]
    assert _deltas(events, 1) == [{"type": "text_delta", "text": "Answer."}]


def test_server_tool_blocks(server: ScriptedAnthropic, client: httpx.Client) -> None:
    results = [{"type": "web_search_result", "url": "https://example.com", "title": "Ex"}]
    reply = AReply.server_tool(
        "web_search", {"query": "weather"}, results, id="srvtoolu_1", text=["It is sunny."]
    )
    events = _events_of(server, client, reply)

    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert starts[0] == {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {},
    }
    assert starts[1] == {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": results,
    }
    assert starts[2]["type"] == "text"
    assert json.loads(_assembled_inputs(events)[0]) == {"query": "weather"}
    assert _deltas(events, 1) == []
    [delta] = [d for n, d in events if n == "message_delta"]
    assert delta["delta"]["stop_reason"] == "end_turn"


def test_message_composes_blocks(server: ScriptedAnthropic, client: httpx.Client) -> None:
    reply = AReply.message(
        [
            thinking_block("hm", "s"),
            server_tool_result_block("srvtoolu_z", [], "code_execution_tool_result"),
            text_block("t"),
            tool_use_block("now", {}, "toolu_z"),
        ],
        stop_reason="pause_turn",
    )
    events = _events_of(server, client, reply)
    types = [d["content_block"]["type"] for n, d in events if n == "content_block_start"]
    assert types == ["thinking", "code_execution_tool_result", "text", "tool_use"]
    [delta] = [d for n, d in events if n == "message_delta"]
    assert delta["delta"]["stop_reason"] == "pause_turn"


# --- errors and broken streams ---


def test_error_reply_body_and_headers(server: ScriptedAnthropic, client: httpx.Client) -> None:
    server.enqueue(
        AReply.error(429, "rate_limit_error", "slow down", {"retry-after": "1"}),
        AReply.error(529),
    )
    first = client.post("/v1/messages", json=_body())
    second = client.post("/v1/messages", json=_body())

    assert first.status_code == 429
    assert first.headers["retry-after"] == "1"
    assert first.headers["content-type"] == "application/json"
    assert first.json() == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "slow down"},
    }
    assert second.status_code == 529
    assert second.json()["error"]["type"] == "overloaded_error"


def test_error_reply_body_override(server: ScriptedAnthropic, client: httpx.Client) -> None:
    server.enqueue(AReply.error(502, body="<html>bad gateway</html>"))
    response = client.post("/v1/messages", json=_body())
    assert response.status_code == 502
    assert response.text == "<html>bad gateway</html>"


@pytest.mark.parametrize("pieces", [[], ["Some ", "text"]], ids=["before-output", "after-text"])
def test_stream_error_event(
    server: ScriptedAnthropic, client: httpx.Client, pieces: list[str]
) -> None:
    events = _events_of(server, client, AReply.stream_error(pieces, "overloaded_error"))
    names = _names(events)

    assert names[0] == "message_start"
    assert names[-1] == "error"
    assert events[-1][1] == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    assert "message_delta" not in names and "message_stop" not in names
    if pieces:
        assert [d["text"] for d in _deltas(events, 0)] == pieces
        assert "content_block_stop" not in names  # the error comes inside the block
    else:
        assert names == ["message_start", "error"]


def test_cut_drops_the_connection(server: ScriptedAnthropic, client: httpx.Client) -> None:
    server.enqueue(AReply.cut(["par", "tial"], partial='event: content_block_delta\ndata: {"ty'))
    lines: list[str] = []
    with (
        pytest.raises(httpx.RemoteProtocolError),
        client.stream("POST", "/v1/messages", json=_body()) as response,
    ):
        lines.extend(response.iter_lines())

    events = _parse(lines)
    assert [d["text"] for d in _deltas(events, 0)] == ["par", "tial"]
    assert "message_stop" not in _names(events)


def test_hang_times_out_client(server: ScriptedAnthropic, client: httpx.Client) -> None:
    server.enqueue(AReply.hang(5))
    timeout = httpx.Timeout(5.0, read=0.2)
    with (
        client.stream("POST", "/v1/messages", json=_body(), timeout=timeout) as response,
        pytest.raises(httpx.ReadTimeout),
    ):
        assert response.status_code == 200
        response.read()


def test_raw_lines_are_exact(server: ScriptedAnthropic, client: httpx.Client) -> None:
    server.enqueue(AReply.raw(["event: ping", "data: {not json}", ""], status=201))
    response = client.post("/v1/messages", json=_body())
    assert response.status_code == 201
    assert response.content == b"event: ping\ndata: {not json}\n\n"


# --- recording, routing, queue ---


def test_requests_recorded_with_headers_and_body(
    server: ScriptedAnthropic, client: httpx.Client
) -> None:
    server.enqueue(AReply.text("one"), AReply.text("two"))
    before = time.monotonic()
    headers = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}
    with httpx.Client(base_url=server.base_url, headers=headers, trust_env=False) as authed:
        _events(authed)
    _events(client, _body(system="be brief"))

    assert server.wait_for_requests(2, timeout=1.0)
    first, second = server.requests
    assert first.method == "POST" and first.path == "/v1/messages"
    assert first.headers["x-api-key"] == "sk-ant-test"
    assert first.headers["anthropic-version"] == "2023-06-01"
    assert first.json == _body()
    assert second.json["system"] == "be brief"
    assert "x-api-key" not in second.headers
    assert before <= first.time <= second.time
    assert server.pending == 0


def test_no_reply_queued_is_an_api_error(server: ScriptedAnthropic, client: httpx.Client) -> None:
    response = client.post("/v1/messages", json=_body())
    assert response.status_code == 500
    assert response.json()["error"] == {"type": "api_error", "message": NO_REPLY_MESSAGE}
    assert len(server.requests) == 1


def test_unknown_route_and_bad_body(server: ScriptedAnthropic, client: httpx.Client) -> None:
    server.enqueue(AReply.text("never"))
    assert client.post("/v1/chat/completions", json=_body()).status_code == 404
    assert client.get("/v1/messages").status_code == 404
    bad = client.post("/v1/messages", content=b"{not json", headers={"content-type": "x"})
    assert bad.status_code == 400
    assert bad.json()["error"]["type"] == "invalid_request_error"
    assert server.pending == 1  # neither consumed the queued reply
    assert [r.json for r in server.requests] == [None]


def test_wait_for_requests_times_out(server: ScriptedAnthropic) -> None:
    started = time.monotonic()
    assert server.wait_for_requests(1, timeout=0.1) is False
    assert time.monotonic() - started < 10  # it gave up; it did not wait for a request


def test_stop_is_prompt_while_a_reply_hangs() -> None:
    with ScriptedAnthropic() as srv:
        srv.enqueue(AReply.hang(30))
        client = httpx.Client(base_url=srv.base_url, timeout=5.0, trust_env=False)
        response = client.send(
            client.build_request("POST", "/v1/messages", json=_body()), stream=True
        )
        assert response.status_code == 200
        started = time.monotonic()
    assert time.monotonic() - started < 3  # __exit__ woke the hanging handler
    with pytest.raises(httpx.HTTPError):
        response.read()
    response.close()
    client.close()
    assert srv.errors == []


def test_models_listing_is_paged(server: ScriptedAnthropic, client: httpx.Client) -> None:
    server.models = ["claude-a", "claude-b", "claude-c"]
    first = client.get("/v1/models", params={"limit": 2}).json()
    rest = client.get("/v1/models", params={"limit": 2, "after_id": first["last_id"]}).json()

    assert [m["id"] for m in first["data"]] == ["claude-a", "claude-b"]
    assert first["has_more"] is True
    assert first["data"][0]["type"] == "model"
    assert [m["id"] for m in rest["data"]] == ["claude-c"]
    assert rest["has_more"] is False
    assert len(server.listings) == 2
