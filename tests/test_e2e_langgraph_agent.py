"""End-to-end: `agentcli run --agent URL` against a LangGraph graph served by
`ag-ui-langgraph` (peers nobody here wrote), its model langchain-core's fake chat model,
which answers whole: the adapter then sends the graph's calls and answers only in its
MESSAGES_SNAPSHOT. agentcli must run the local call with its real arguments, show the
answer, and send the graph its own calls, its state and the workspace's context."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agui_helpers import peer_agent
from tests.conftest import RunCli
from tests.test_e2e_agui import parse_and_validate

pytest.importorskip("ag_ui_langgraph")
pytest.importorskip("uvicorn")

PEER = Path(__file__).parent / "peers" / "langgraph_agent.py"


@pytest.fixture(scope="module")
def graph() -> Iterator[str]:
    with peer_agent(PEER) as url:
        yield url


def test_a_call_sent_only_in_the_snapshot_runs_with_its_arguments(run_cli: RunCli, graph: str):
    prompt = 'call lookup {"key": "k"} then call read_file {"path": "README.md"}'
    result = run_cli(["run", "--agent", graph, "-o", "jsonl", prompt])
    assert result.returncode == 0, result.stderr
    raw = [e for e, _ in parse_and_validate(result.stdout)]
    args = {
        e["toolCallId"]: e["delta"] for e in raw if e["type"] == "TOOL_CALL_ARGS"
    }  # one piece each: given whole
    starts = {e["toolCallId"]: e["toolCallName"] for e in raw if e["type"] == "TOOL_CALL_START"}
    read = next(call_id for call_id, name in starts.items() if name == "read_file")
    assert args[read] == '{"path": "README.md"}'  # not read_file({})
    results = {e["toolCallId"]: e["content"] for e in raw if e["type"] == "TOOL_CALL_RESULT"}
    assert "Demo project" in results[read]
    text = "".join(e["delta"] for e in raw if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text.startswith("the tool said: k is 42 | the tool said: ") and "Demo project" in text
    assert any(e["type"] == "STATE_SNAPSHOT" and e["snapshot"].get("visits") for e in raw)


def test_the_graph_is_told_the_workspace_and_continues_the_thread(
    run_cli: RunCli, graph: str, workspace: Path
):
    (workspace / "AGENTS.md").write_text("Answer in haiku.\n")
    told = run_cli(["run", "--agent", graph, "--system", "be kind", "show context"])
    assert told.returncode == 0, told.stderr
    assert str(workspace) in told.stdout
    assert "Answer in haiku." in told.stdout and "be kind" in told.stdout
    again = run_cli(["run", "--continue", "--agent", graph, 'call lookup {"key": "z"}'])
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "the tool said: z is 42"
