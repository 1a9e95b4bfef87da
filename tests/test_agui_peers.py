"""AG-UI against peers nobody here wrote: @ag-ui/client's HttpAgent (npm) drives
`agentcli serve`. Skips cleanly without node or the package (.ci/run installs it into a
temporary directory when npm is there and names it in AGUI_NODE_MODULES)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.agui_helpers import EVENT, TOKEN, types
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_serve import Serve, serve  # noqa: F401  (the fixture)

pytest.importorskip("starlette")

PEERS = Path(__file__).parent / "peers"


def node_modules() -> str:
    found = os.environ.get("AGUI_NODE_MODULES", "")
    if not shutil.which("node") or not found or not (Path(found) / "@ag-ui" / "client").is_dir():
        pytest.skip("node and @ag-ui/client are not installed (set AGUI_NODE_MODULES)")
    return found


def test_http_agent_runs_text_frontend_tool_and_confirmation_round_trips(
    serve: Serve,  # noqa: F811
    server: ScriptedServer,
    workspace: Path,
):
    modules = node_modules()
    url = serve()
    # each scenario ends with a reloaded page's run (its answer: `probed`), which is sent
    # the thread's messages at its start
    probed = Reply.text(["here it is"])
    # text run
    server.enqueue(Reply.text(["Hi ", "from agentcli"]), probed)
    # frontend tool: the call, then the answer after the client's result
    server.enqueue(
        Reply.tool_calls([{"id": "call_pc", "name": "pick_color", "arguments": {"prompt": "?"}}])
    )
    server.enqueue(Reply.text(["you chose blue"]), probed)
    # confirmation: a write that asks, then the answer once approved
    write = {
        "id": "call_wr",
        "name": "write_file",
        "arguments": {"path": "js.txt", "content": "from js\n"},
    }
    server.enqueue(Reply.tool_calls([write]))
    server.enqueue(Reply.text(["written"]), probed)
    # state: the model changes the page's state, then a reloaded page asks about it
    patch = [{"op": "add", "path": "/items/-", "value": "milk"}]
    change = {"id": "call_st", "name": "update_state", "arguments": {"patch": patch}}
    server.enqueue(Reply.tool_calls([change]))
    server.enqueue(Reply.text(["added milk"]))
    server.enqueue(Reply.text(["milk is on it"]), probed)
    done = subprocess.run(
        ["node", str(PEERS / "http_agent.cjs"), url, TOKEN],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NODE_PATH": modules},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    for name, scenario in result.items():
        assert scenario["failures"] == [], (name, scenario["failures"])
        for event in scenario["events"]:
            EVENT.validate_python(event)  # what the client received, valid for the Python SDK
    # After every run the client's messages are the thread's: from the run's events, or
    # from the snapshot that ends it when the events could not give them.
    for name in ("text", "frontend", "confirm"):
        scenario = result[name]
        thread = scenario["thread"]
        assert plain(scenario["messages"]) == thread, name
        for after in scenario["after"]:  # the thread then: what it has now began so
            held = plain(after["messages"])
            assert without_confirm_calls(held) == thread[: len(held)], name
    kinds = {name: types(result[name]["events"]) for name in result}
    assert "MESSAGES_SNAPSHOT" not in kinds["text"] + kinds["frontend"]
    # the answer to confirm_tool_call: the client holds the exchange, which the thread
    # keeps none of; only the snapshot that ends the run takes it away
    assert kinds["confirm"].count("MESSAGES_SNAPSHOT") == 1
    assert kinds["confirm"][-2:] == ["MESSAGES_SNAPSHOT", "RUN_FINISHED"]

    text = result["text"]
    said = [m for m in text["messages"] if m["role"] == "assistant"]
    assert said[-1]["content"] == "Hi from agentcli"

    frontend = result["frontend"]
    roles = [m["role"] for m in frontend["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert frontend["messages"][-1]["content"] == "you chose blue"
    assert server.requests[3].json["messages"][-1]["content"] == "blue"

    confirm = result["confirm"]
    # after the first run the client has the thread's messages (MESSAGES_SNAPSHOT) with the
    # pending confirm_tool_call in them, so it can answer it
    first = confirm["after"][0]["messages"]
    calls = [c for m in first for c in m.get("toolCalls") or []]
    assert [c["function"]["name"] for c in calls] == ["write_file", "confirm_tool_call"]
    assert json.loads(calls[1]["function"]["arguments"])["toolCallId"] == "call_wr"
    assert (workspace / "js.txt").read_text() == "from js\n"
    # afterwards, the thread's messages: the approval is recorded, not a message
    assert [m["role"] for m in confirm["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert confirm["messages"][-1]["content"] == "written"

    state = result["state"]
    first, reloaded = state["after"]
    assert first["state"] == {"items": ["milk"]}  # the client applied the STATE_DELTA
    kinds = types(state["events"])
    assert kinds.count("STATE_DELTA") == 1 and kinds.count("STATE_SNAPSHOT") == 1
    # the reloaded page got the thread's state and messages at the start of its run, and
    # no snapshot at the end of either run
    assert reloaded["state"] == {"items": ["milk"]}
    start = kinds.index("RUN_STARTED", kinds.index("RUN_FINISHED"))
    assert kinds[start + 1 : start + 3] == ["MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"]
    assert kinds.count("MESSAGES_SNAPSHOT") == 1
    [given] = [e["messages"] for e in state["events"] if e["type"] == "MESSAGES_SNAPSHOT"]
    # the first page had the thread's messages after its run (all but the reloaded one's)
    assert plain(first["messages"]) == [m for m in given if m["id"] != "js-state-u2"]
    thread = state["thread"]
    said = [m.get("content") for m in thread if m["role"] != "tool"]
    assert said == ["add milk", None, "added milk", "what is on the list?", "milk is on it"]
    # the client merges a snapshot into what it has: its own message keeps its place, the
    # thread's follow (so its order is not the thread's; its messages are)
    by_id = sorted(plain(reloaded["messages"]), key=lambda m: m["id"])
    assert by_id == sorted(thread, key=lambda m: m["id"])
    # the model had the state, and the page's forwardedProps, as context
    asked = server.requests[8].json["messages"][0]["content"]
    assert '"items": []' in asked and "shopping-list" in asked
    assert '"items": ["milk"]' in server.requests[10].json["messages"][0]["content"]
    offered = [t["function"]["name"] for t in server.requests[8].json["tools"]]
    assert "update_state" in offered


def plain(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages without the events' `metadata`, which @ag-ui/client keeps on the messages
    and calls it builds from them (a result's latency, a call's provider): the thread's
    messages carry none."""
    kept = []
    for message in messages:
        message = {k: v for k, v in message.items() if k != "metadata"}
        if "toolCalls" in message:
            message["toolCalls"] = [
                {k: v for k, v in call.items() if k != "metadata"} for call in message["toolCalls"]
            ]
        kept.append(message)
    return kept


def without_confirm_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The thread keeps a pending confirm_tool_call call only while it waits."""
    kept = []
    for message in messages:
        calls = message.get("toolCalls")
        if calls:
            calls = [c for c in calls if c["function"]["name"] != "confirm_tool_call"]
            message = {**message, "toolCalls": calls}
        kept.append(message)
    return kept
