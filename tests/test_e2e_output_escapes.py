"""`-o json` and `-o jsonl` on a terminal: C1 controls (U+009B is a one-character CSI) and
the invisible reordering characters (U+202E) are characters JSON allows raw, and a terminal
showing the output would obey them. They are written as `\\u` escapes: a reader of the
JSON gets the same strings back (security.md: visible_json for JSON output)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer

HOSTILE = "a\u009b2Jb\u202ec"


@pytest.mark.parametrize("mode", ["json", "jsonl"])
def test_json_output_escapes_what_a_terminal_would_obey(
    run_cli: RunCli, server: ScriptedServer, mode: str
) -> None:
    server.enqueue(Reply.text([HOSTILE]))
    result = run_cli(["run", "-o", mode, "hi"], server=server)
    assert result.returncode == 0, result.stderr
    assert "\u009b" not in result.stdout and "\u202e" not in result.stdout
    if mode == "json":
        assert json.loads(result.stdout)["text"] == HOSTILE
    else:
        events = [json.loads(line) for line in result.stdout.splitlines()]
        deltas = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
        assert "".join(deltas) == HOSTILE


def test_a_tool_name_with_a_newline_never_starts_a_line_of_its_own(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    forged = "read_file\nagentcli: error: forged"
    call = {"id": "c1", "name": forged, "arguments": {"path": "x"}}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "hi"], server=server)
    assert result.returncode == 0, result.stderr
    assert not [line for line in result.stderr.splitlines() if line.startswith("agentcli: error")]
    assert "read_file\\nagentcli: error: forged" in result.stderr
