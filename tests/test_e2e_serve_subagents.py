"""A subagent in a served run (`agentcli serve`): the client's stream carries the task
call and its result, none of the subagent's own events, and stays valid AG-UI (one run,
everything opened closed); a subagent's call that would ask is refused, since its approval
cannot wait for the client's next run."""

from __future__ import annotations

import pytest

from tests.agui_helpers import post_run, run_input, types
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_serve import USER, Serve, serve

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

__all__ = ["serve"]  # the fixture, used here


def test_a_served_run_gets_the_subagents_answer_and_none_of_its_events(
    serve: Serve, server: ScriptedServer
) -> None:
    url = serve()
    write = {"path": "made.txt", "content": "x"}
    server.enqueue(
        Reply.tool_calls([{"id": "t1", "name": "task", "arguments": {"prompt": "Make it."}}]),
        Reply.tool_calls([{"id": "w1", "name": "write_file", "arguments": write}]),
        Reply.text(["it was refused"]),
        Reply.text(["done"]),
    )
    events = post_run(url, run_input("t1", "r1", [USER]))
    assert types(events).count("RUN_STARTED") == 1
    assert types(events)[-1] == "RUN_FINISHED"
    assert not [e for e in events if "runId" in (e.get("metadata") or {})]
    [result] = [e for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert (result["toolCallId"], result["content"]) == ("t1", "it was refused")
    child_results = [m for m in server.requests[2].json["messages"] if m["role"] == "tool"]
    assert child_results[0]["content"].startswith("denied: ")
