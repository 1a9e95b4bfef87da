"""End-to-end: compaction when the history is already beyond the context window (grown
under a larger model, or a huge pasted text): the summary is written piece by piece, every
summary request fits the window, non-English text included, and the session continues."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCli
from tests.replying_server import ReplyingServer
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_sessions import (
    assert_valid_history,
    jsonl_events,
    only_session,
    stored_messages,
)

SUMMARY_SYSTEM_START = "You condense a conversation"
WINDOW = 4_000


class Summariser(ReplyingServer):
    """Answers each summary request with a numbered summary, anything else plainly."""

    def __init__(self) -> None:
        super().__init__()
        self.summaries = 0

    def reply_for(self, request: Any) -> Reply:
        system = request.json["messages"][0]["content"]
        if system.startswith(SUMMARY_SYSTEM_START):
            with self._cond:
                self.summaries += 1
                number = self.summaries
            return Reply.text([f"SUMMARY-{number}: the user pasted a long text."])
        return Reply.text(["Answered."])


def is_summary(request: Any) -> bool:
    return request.json["messages"][0]["content"].startswith(SUMMARY_SYSTEM_START)


@pytest.mark.parametrize("text", ["code", "cjk"])
def test_a_history_beyond_the_window_is_summarised_in_pieces(
    run_cli: RunCli, cli_home: Path, text: str
) -> None:
    if text == "code":
        big = "\n".join(f"def f{i}(x): return x * {i}  # line {i}" for i in range(2_000))
    else:
        big = "".join(chr(0x4E00 + i % 2000) for i in range(20_000))  # CJK characters
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True)
    with Summariser() as server:
        first = run_cli(["run", "-"], input=big, server=server)  # under a large window
        assert first.returncode == 0, first.stderr
        config.write_text(f"[context]\nwindow = {WINDOW}\nkeep_turns = 1\n")

        second = run_cli(["run", "--continue", "-o", "jsonl", "and now?"], server=server)

        assert second.returncode == 0, second.stderr
        summary_requests = [r for r in server.requests if is_summary(r)]
        assert len(summary_requests) >= 3, len(summary_requests)
        for request in summary_requests:
            size = len(json.dumps(request.json["messages"], ensure_ascii=False).encode())
            assert size <= 2 * WINDOW, size  # at most ~1.5 tokens per CJK char: it fits
        # Each piece carries the summary so far; the whole text went into some piece.
        assert "SUMMARY-1" in json.dumps(summary_requests[1].json, ensure_ascii=False)
        main = server.requests[-1].json["messages"]
        assert f"SUMMARY-{server.summaries}" in main[0]["content"]
        assert_valid_history(main)
        assert main[-1] == {"role": "user", "content": "and now?"}
        [event] = [e for e in jsonl_events(second.stdout) if e.get("name") == "compaction"]
        assert event["value"]["requests"] == len(summary_requests)


def test_latest_tool_outputs_beyond_the_window_are_trimmed_oldest_first(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """One turn whose own tool outputs overflow the window: nothing older to summarise, so
    the oldest results are shortened in what is sent (the session keeps them whole)."""
    window = 8_000
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f"[context]\nwindow = {window}\n")
    calls = [
        {
            "id": f"c{n}",
            "name": "run_shell",
            "arguments": {"command": f"echo OUT{n}; head -c 12000 /dev/zero | tr '\\0' {n}"},
        }
        for n in (1, 2, 3)
    ]
    summary = Reply.text(["SUMMARY: the user wants three outputs."])  # of the prompt alone
    server.enqueue(Reply.tool_calls(calls), summary, Reply.text(["Read them."]))
    result = run_cli(["run", "--yes", "three outputs"], server=server)

    assert result.returncode == 0, result.stderr
    body = server.requests[-1].json
    assert_valid_history([*body["messages"], {"role": "user", "content": ""}])
    size = len(json.dumps(body["messages"])) + len(json.dumps(body["tools"]))
    assert size <= 3 * window, size
    results = {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}
    assert "left out to fit the context window" in results["c1"]
    assert all(f"OUT{n}" in results[f"c{n}"] for n in (1, 2, 3))
    stored = [m for m in stored_messages(only_session(cli_home)) if m["role"] == "tool"]
    assert [len(m["content"]) >= 12_000 for m in stored] == [True, True, True]
