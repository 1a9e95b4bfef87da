"""system_info (the machine's facts, low risk) and ask_user (the model asks the person): with
nobody to ask it is an error result at once; with a terminal the question is shown inline
and the answer — a choice by number or text, or free text — goes back to the model."""

from __future__ import annotations

import asyncio
import os
import platform
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pexpect
import pytest

from agentcli.risk import Risk
from agentcli.tools.ask_user import AskUser
from agentcli.tools.base import ToolContext, ToolFailure, ToolOutput
from agentcli.tools.system_info import SystemInfo
from agentcli.workspace.root import Workspace
from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer

ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[@-Z\\-_])")
TIMEOUT = 10
GIB = r"\d+\.\d GiB"


# --- system_info ------------------------------------------------------------------------


def info(root: Path) -> tuple[ToolOutput, dict[str, str]]:
    out = asyncio.run(SystemInfo().execute({}, ToolContext(workspace=Workspace(root))))
    rows = {}
    for line in out.content.splitlines():
        key, value = re.split(r"\s{2,}", line, maxsplit=1)
        rows[key] = value
    return out, rows


def test_system_info_reports_every_fact(tmp_path: Path) -> None:
    out, rows = info(tmp_path)

    assert not out.error
    assert list(rows) == ["os", "cpu", "cores", "memory", "disk (workspace)", "python", "load"]
    assert all(value.strip() for value in rows.values()), rows
    assert rows["os"].startswith(f"{platform.system()} {platform.release()}")
    assert rows["cpu"] != ""
    assert rows["cores"].startswith(f"{os.cpu_count()} logical")
    assert re.fullmatch(rf"{GIB} total, {GIB} available", rows["memory"]), rows["memory"]
    assert re.fullmatch(rf"{GIB} total, {GIB} free", rows["disk (workspace)"])
    assert rows["python"].startswith(platform.python_version())
    assert re.fullmatch(r"\d+\.\d\d, \d+\.\d\d, \d+\.\d\d \(1, 5, 15 min\)", rows["load"])
    assert out.summary == rows["os"][:60]


def test_system_info_measures_the_workspace_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Path] = []
    real = shutil.disk_usage

    def spy(path: Any) -> Any:
        seen.append(Path(path))
        return real(path)

    monkeypatch.setattr(shutil, "disk_usage", spy)  # the module imports shutil when it runs
    _, rows = info(tmp_path)

    assert seen == [Path(os.path.realpath(tmp_path))]
    usage = real(tmp_path)
    expected = f"{usage.total / 1024**3:.1f} GiB total"
    assert rows["disk (workspace)"].startswith(expected)


def test_system_info_memory_is_plausible(tmp_path: Path) -> None:
    _, rows = info(tmp_path)
    total, available = (float(x) for x in re.findall(r"(\d+\.\d) GiB", rows["memory"]))
    assert total > 0
    assert 0 <= available <= total


def test_system_info_is_low_risk_without_parameters(tmp_path: Path) -> None:
    tool = SystemInfo()
    ctx = ToolContext(workspace=Workspace(tmp_path))
    assert tool.assess({}, ctx).risk is Risk.LOW
    assert tool.parameters.get("properties") == {}
    assert "required" not in tool.parameters


# --- ask_user, in process -----------------------------------------------------------------


def ask(args: dict[str, Any], asker: Any = None) -> ToolOutput:
    ctx = ToolContext(workspace=Workspace("."), ask=asker)
    return asyncio.run(AskUser().execute(args, ctx))


def test_ask_user_with_nobody_to_ask_fails_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(ToolFailure) as failure:
        ask({"question": "Which database?", "choices": ["sqlite", "postgres"]})
    assert time.monotonic() - started < 10  # it did not wait for an answer
    message = str(failure.value)
    assert message.startswith("nobody can answer")
    assert "Decide without asking" in message


def test_ask_user_returns_the_answer_of_the_asker() -> None:
    asked: list[tuple[str, list[str] | None]] = []

    async def asker(question: str, choices: list[str] | None) -> str:
        asked.append((question, choices))
        await asyncio.sleep(0)
        return "postgres"

    out = ask({"question": "Which database?", "choices": ["sqlite", "postgres"]}, asker)
    assert (out.content, out.summary, out.error) == (
        "The user answered: postgres",
        "postgres",
        False,
    )

    out = ask({"question": "Your name?"}, asker)
    assert out.content == "The user answered: postgres"
    assert asked == [("Which database?", ["sqlite", "postgres"]), ("Your name?", None)]


def test_ask_user_is_low_risk_and_choices_are_strings() -> None:
    tool = AskUser()
    ctx = ToolContext(workspace=Workspace("."))
    assert tool.assess({"question": "q"}, ctx).risk is Risk.LOW
    assert tool.parameters["required"] == ["question"]
    assert tool.parameters["properties"]["choices"]["items"] == {"type": "string"}


# --- ask_user, end to end --------------------------------------------------------------------


def ask_call(question: str, choices: list[str] | None = None) -> dict[str, Any]:
    arguments: dict[str, Any] = {"question": question}
    if choices is not None:
        arguments["choices"] = choices
    return {"id": "a1", "name": "ask_user", "arguments": arguments}


def tool_messages(server: ScriptedServer, index: int) -> list[dict[str, Any]]:
    return [m for m in server.requests[index].json["messages"] if m["role"] == "tool"]


def test_e2e_without_a_terminal_nobody_answers_and_the_run_goes_on(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(
        Reply.tool_calls([ask_call("Which color?", ["red", "green"])]),
        Reply.text(["I assumed red."]),
    )
    started = time.monotonic()
    result = run_cli(["run", "pick a color"], server=server, timeout=20)

    assert time.monotonic() - started < 10
    assert result.returncode == 0, result.stderr
    [tool] = tool_messages(server, 1)
    assert "nobody can answer" in tool["content"]  # an error result ("Error: nobody …")
    assert "Decide without asking" in tool["content"]
    assert "I assumed red." in result.stdout
    assert len(server.requests) == 2


class Terminal:
    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        self.text = ""

    def wait(self, pattern: str) -> None:
        self.child.expect_exact(pattern, timeout=TIMEOUT)
        self.text += ANSI.sub("", (self.child.before or "") + str(self.child.after))

    def finish(self) -> int:
        self.child.expect_exact(pexpect.EOF, timeout=TIMEOUT)
        self.text += ANSI.sub("", self.child.before or "")
        self.child.close()
        return self.child.exitstatus if self.child.exitstatus is not None else -1


@pytest.fixture
def terminal(pty_cli: Any) -> Any:
    def start(*args: str) -> Terminal:
        return Terminal(pty_cli(["run", *args], width=200, timeout=TIMEOUT))

    return start


def test_e2e_terminal_choice_by_number(terminal: Any, server: ScriptedServer) -> None:
    server.enqueue(
        Reply.tool_calls([ask_call("Which color?", ["red", "green", "blue"])]),
        Reply.text(["green it is"]),
    )
    term = terminal("pick a color")
    term.wait("? Which color?")
    term.wait("1. red")
    term.wait("2. green")
    term.wait("3. blue")
    term.wait("number or text:")
    term.child.send("2\r")
    code = term.finish()

    assert code == 0, term.text
    [tool] = tool_messages(server, 1)
    assert tool["content"] == "The user answered: green"
    assert "green it is" in term.text


def test_e2e_terminal_choice_insists_on_a_valid_answer(terminal: Any, server: ScriptedServer):
    server.enqueue(
        Reply.tool_calls([ask_call("Which color?", ["red", "green", "blue"])]),
        Reply.text(["ok"]),
    )
    term = terminal("pick a color")
    term.wait("number or text:")
    term.child.send("7\r")
    term.wait("choose 1-3 or type one of the choices")
    term.child.send("blue\r")
    code = term.finish()

    assert code == 0, term.text
    [tool] = tool_messages(server, 1)
    assert tool["content"] == "The user answered: blue"


def test_e2e_terminal_free_text(terminal: Any, server: ScriptedServer) -> None:
    server.enqueue(Reply.tool_calls([ask_call("What is the project called?")]), Reply.text(["ok"]))
    term = terminal("name it")
    term.wait("? What is the project called?")
    term.wait("answer:")
    term.child.send("Ada Lovelace 2\r")
    code = term.finish()

    assert code == 0, term.text
    [tool] = tool_messages(server, 1)
    assert tool["content"] == "The user answered: Ada Lovelace 2"


def test_e2e_ctrl_c_at_the_question_cancels_the_run(terminal: Any, server: ScriptedServer):
    server.enqueue(
        Reply.tool_calls([ask_call("Which color?", ["red", "green"])]), Reply.text(["never"])
    )
    term = terminal("pick a color")
    term.wait("number or text:")
    started = time.monotonic()
    term.child.sendcontrol("c")
    code = term.finish()

    assert time.monotonic() - started < 5
    assert code == 130, term.text
    assert len(server.requests) == 1
