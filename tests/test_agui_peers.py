"""AG-UI against peers nobody here wrote: @ag-ui/client's HttpAgent (npm) drives
`agentcli serve`. Skips cleanly without node or the package (.ci/run installs it into a
temporary directory when npm is there and names it in AGUI_NODE_MODULES)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.agui_helpers import EVENT, TOKEN
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
    # text run
    server.enqueue(Reply.text(["Hi ", "from agentcli"]))
    # frontend tool: the call, then the answer after the client's result
    server.enqueue(
        Reply.tool_calls([{"id": "call_pc", "name": "pick_color", "arguments": {"prompt": "?"}}])
    )
    server.enqueue(Reply.text(["you chose blue"]))
    # confirmation: a write that asks, then the answer once approved
    write = {
        "id": "call_wr",
        "name": "write_file",
        "arguments": {"path": "js.txt", "content": "from js\n"},
    }
    server.enqueue(Reply.tool_calls([write]))
    server.enqueue(Reply.text(["written"]))
    # state: the model changes the page's state, then a reloaded page asks about it
    patch = [{"op": "add", "path": "/items/-", "value": "milk"}]
    change = {"id": "call_st", "name": "update_state", "arguments": {"patch": patch}}
    server.enqueue(Reply.tool_calls([change]))
    server.enqueue(Reply.text(["added milk"]))
    server.enqueue(Reply.text(["milk is on it"]))
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
    text = result["text"]
    said = [m for m in text["messages"] if m["role"] == "assistant"]
    assert said[-1]["content"] == "Hi from agentcli"

    frontend = result["frontend"]
    roles = [m["role"] for m in frontend["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert frontend["messages"][-1]["content"] == "you chose blue"
    assert server.requests[2].json["messages"][-1]["content"] == "blue"

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
    for name in ("text", "frontend", "confirm"):  # every run ends with the thread's messages
        snapshots = [e for e in result[name]["events"] if e["type"] == "MESSAGES_SNAPSHOT"]
        assert len(snapshots) == len(result[name]["after"]), name

    state = result["state"]
    first, reloaded = state["after"]
    assert first["state"] == {"items": ["milk"]}  # the client applied the STATE_DELTA
    kinds = [e["type"] for e in state["events"]]
    assert kinds.count("STATE_DELTA") == 1 and kinds.count("STATE_SNAPSHOT") == 1
    # the reloaded page got the thread's state and messages at the start of its run
    assert reloaded["state"] == {"items": ["milk"]}
    start = kinds.index("RUN_STARTED", kinds.index("RUN_FINISHED"))
    assert kinds[start + 1 : start + 3] == ["MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"]
    last = [e for e in state["events"] if e["type"] == "MESSAGES_SNAPSHOT"][-1]["messages"]
    said = [m.get("content") for m in last if m["role"] != "tool"]
    assert said == ["add milk", None, "added milk", "what is on the list?", "milk is on it"]
    # the client merges a snapshot into what it has (its own messages keep their places)
    assert sorted(m["id"] for m in reloaded["messages"]) == sorted(m["id"] for m in last)
    # the model had the state, and the page's forwardedProps, as context
    asked = server.requests[5].json["messages"][0]["content"]
    assert '"items": []' in asked and "shopping-list" in asked
    assert '"items": ["milk"]' in server.requests[7].json["messages"][0]["content"]
    offered = [t["function"]["name"] for t in server.requests[5].json["tools"]]
    assert "update_state" in offered
