"""What `agentcli mcp serve` waits for at the end of stdin (agentcli.mcp_serve.stdin_end):
the client's requests not yet answered, and nothing else. Through the CLI:
tests/test_mcp_serve.py."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agentcli.mcp_serve.stdin_end import InFlight

pytest.importorskip("mcp")


def message(raw: dict[str, Any]) -> Any:
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    return SessionMessage(jsonrpc_message_adapter.validate_python(raw))


def request(request_id: int) -> Any:
    return message({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"})


def cancelled(request_id: int) -> Any:
    params = {"requestId": request_id, "reason": "not needed"}
    return message({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})


def answer(request_id: int) -> Any:
    return message({"jsonrpc": "2.0", "id": request_id, "result": {}})


async def drains(in_flight: InFlight, answered_later: list[int]) -> list[str]:
    """What happens, in order, when stdin ends and then `answered_later` are answered."""
    said: list[str] = []
    sink_writer, sink = anyio.create_memory_object_stream[Any](10)
    answers_writer, answers = anyio.create_memory_object_stream[Any](10)
    out_writer, out = anyio.create_memory_object_stream[Any](10)

    async def drain() -> None:
        await in_flight.drained(sink_writer)
        said.append("drained")

    with anyio.move_on_after(10):  # a wait that never ends shows as no "drained"
        async with anyio.create_task_group() as group, out, sink:
            group.start_soon(in_flight.relay, answers, out_writer, sink_writer)
            group.start_soon(drain)
            await anyio.wait_all_tasks_blocked()
            for request_id in answered_later:
                said.append(f"answer {request_id}")
                await answers_writer.send(answer(request_id))
                await anyio.wait_all_tasks_blocked()
            await answers_writer.aclose()
    return said


def test_the_end_of_stdin_waits_for_each_request_read_to_be_answered() -> None:
    in_flight = InFlight()
    in_flight.read(request(1))
    in_flight.read(request(2))
    said = anyio.run(drains, in_flight, [2, 1])
    assert said == ["answer 2", "answer 1", "drained"]


def test_a_request_the_client_cancelled_is_not_waited_for() -> None:
    """MCP: a cancelled request gets no answer; waiting for one would never end."""
    in_flight = InFlight()
    in_flight.read(request(1))
    in_flight.read(request(2))
    in_flight.read(cancelled(2))
    said = anyio.run(drains, in_flight, [1])
    assert said == ["answer 1", "drained"]
