"""The embedded local model never destroys what it was asked to change: a request that
does not ask to replace a whole file never becomes `write_file` of a file that exists (an
edit is `edit_file`, or no call); and a whole-file overwrite the small model chose is
always put to a person, `--yes` or not (with nobody at a terminal it is refused, with the
reason in one line)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.agent.executor import Executor
from agentcli.agent.overwrite_step import OverwriteAsksStep
from agentcli.assembly import builtin_tools
from agentcli.conversation import events as ev
from agentcli.conversation.messages import Message, ToolCall
from agentcli.policy.engine import Policy, Prompt, UserChoice, offered
from agentcli.providers.local import local_available, spelled
from agentcli.providers.local.conversation import last_user_request
from agentcli.providers.local.decision import ANSWER, Decision
from agentcli.providers.local.overwrite import spared_choice, spared_decision
from agentcli.providers.local.typos import corrected
from agentcli.tools.base import ToolContext
from agentcli.workspace.root import Workspace
from tests.conftest import build_env

AGENTCLI = Path(sys.executable).parent / "agentcli"
OFFERED = ["read_file", "write_file", "edit_file", "create_directory"]


# --- the choice: an edit is an edit ---------------------------------------------------


@pytest.mark.parametrize(
    ("request_text", "chosen"),
    [
        ("in notes.md, replace milk with bread", "edit_file"),
        ("change milk to bread in notes.md", "edit_file"),
        ("notes.md should say oat milk", ANSWER),  # no edit spelled out: no call
        ("overwrite notes.md with the text bread", "write_file"),  # asked for: kept
        ("rewrite notes.md from scratch with bread", "write_file"),
        ("create fresh.md with the text bread", "write_file"),  # a new file loses nothing
    ],
)
def test_a_write_onto_an_existing_file_is_kept_only_when_asked_for(
    tmp_path: Path, request_text: str, chosen: str
) -> None:
    (tmp_path / "notes.md").write_text("eggs\nmilk\n")
    assert spared_choice("write_file", request_text, OFFERED, tmp_path) == chosen


def test_a_written_call_onto_an_existing_file_becomes_no_call(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("eggs\nmilk\n")
    call = Decision("write_file", json.dumps({"path": "notes.md", "content": "bread"}))
    request = "in notes.md, replace milk with bread"
    assert spared_decision(call, request, tmp_path).name == ANSWER
    assert spared_decision(call, "overwrite notes.md with bread", tmp_path) is call
    new = Decision("write_file", json.dumps({"path": "new.md", "content": "bread"}))
    assert spared_decision(new, request, tmp_path) is new


@pytest.mark.parametrize(
    ("request_text", "pair"),
    [
        ("in notes.md, replace milk with bread", ("milk", "bread")),
        ("replace the text foo with bar in a.txt", ("foo", "bar")),
        ("change 'old name' to 'new name' in b.md", ("old name", "new name")),
        ("edit c.toml so it says prod instead of dev", ("dev", "prod")),
        ("swap tabs for spaces in d.py", ("tabs", "spaces")),
        ("in e.txt: cat -> dog", ("cat", "dog")),
        ("substitute yes for no in f.txt", ("no", "yes")),
    ],
)
def test_what_an_edit_replaces_is_read_from_the_request(
    request_text: str, pair: tuple[str, str]
) -> None:
    assert spelled.replacements(request_text)[0] == pair
    # ...and never as a whole file's text
    assert pair[1] not in spelled.file_contents(request_text, ["notes.md", "a.txt"])


def test_typos_of_action_words_are_put_right_and_nothing_else_is() -> None:
    assert corrected("shwo me notes.txt") == "show me notes.txt"
    assert corrected("serch for TODO") == "search for TODO"
    assert corrected("calcualte 3*4") == "calculate 3*4"
    for kept in ("hello world", "whats up", "write dnoe into x.txt", "open srcc/mian.py"):
        assert corrected(kept) == kept
    assert last_user_request([Message.user("lsit the files")]) == "list the files"


def test_percentages_and_bare_command_lines_are_spelled_out() -> None:
    assert spelled.expressions("what is 12% of 50?") == ["12 / 100 * 50"]
    assert spelled.expressions("30 percent of 200") == ["30 / 100 * 200"]
    assert spelled.commands("git diff --stat") == ["git diff --stat"]
    assert spelled.commands("run the uptime command for me please") == ["uptime"]
    assert spelled.commands("cat notes.txt") == []  # read_file's, not a command line
    assert spelled.commands("make a folder called logs") == []  # a sentence


# --- the seam: a person is asked, --yes does not answer -----------------------------


def executor_in(root: Path, policy: Policy, small: bool = True) -> tuple[Executor, list]:
    events: list[ev.Event] = []
    context = ToolContext(workspace=Workspace(root))
    step = OverwriteAsksStep(lambda: small)
    return Executor(builtin_tools(), policy, context, events.append, steps=[step]), events


def overwrite(path: str = "notes.md") -> ToolCall:
    return ToolCall("c1", "write_file", json.dumps({"path": path, "content": "bread\n"}))


def test_under_yes_with_nobody_there_an_overwrite_the_small_model_chose_is_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.md").write_text("eggs\nmilk\n")
    policy = Policy(workspace=Workspace(tmp_path), yes=True)
    executor, _ = executor_in(tmp_path, policy)
    [result] = asyncio.run(executor.run([overwrite()]))
    assert (tmp_path / "notes.md").read_text() == "eggs\nmilk\n"
    assert "only a person may approve a whole-file overwrite" in result.content
    assert "--yes does not run it" in result.content
    assert "\n" not in result.content.strip()  # one line
    # a new file is no overwrite: --yes writes it
    [new] = asyncio.run(executor.run([overwrite("new.md")]))
    assert (tmp_path / "new.md").read_text() == "bread\n", new.content


def test_under_yes_a_person_at_the_terminal_is_asked_for_it_once(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("eggs\nmilk\n")
    prompts: list[Prompt] = []

    async def person(prompt: Prompt) -> UserChoice:
        prompts.append(prompt)
        return UserChoice("deny")

    policy = Policy(workspace=Workspace(tmp_path), yes=True, approver=person)
    executor, _ = executor_in(tmp_path, policy)
    asyncio.run(executor.run([overwrite()]))
    assert len(prompts) == 1
    assert offered(prompts[0]) == ["once", "deny"]  # nothing to remember for it
    assert (tmp_path / "notes.md").read_text() == "eggs\nmilk\n"


def test_another_model_s_overwrite_is_decided_as_before(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("eggs\nmilk\n")
    policy = Policy(workspace=Workspace(tmp_path), yes=True)
    executor, _ = executor_in(tmp_path, policy, small=False)
    asyncio.run(executor.run([overwrite()]))
    assert (tmp_path / "notes.md").read_text() == "bread\n"


# --- the installed CLI, with the real model -------------------------------------------

needs_model = pytest.mark.skipif(not local_available(), reason="the local model is not installed")


def run_local(tmp_path: Path, prompt: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    config = home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True)
    # bounded by tokens, not by seconds: a loaded machine must not turn a call into an answer
    config.write_text("[providers.local]\ncall_seconds = 3600\nmax_seconds = 3600\n")
    env = build_env(home, None, {"NO_COLOR": "1"})
    return subprocess.run(
        [str(AGENTCLI), "run", "--model", "local", "--yes", prompt],
        cwd=tmp_path / "work",
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=1800,
    )


@pytest.mark.local_model
@needs_model
def test_the_issue_s_edit_is_an_edit_and_keeps_the_rest_of_the_file(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    notes = tmp_path / "work" / "notes.md"
    notes.write_text("# Shopping\n\n- eggs\n- milk\n- flour\n")
    done = run_local(tmp_path, "in notes.md, replace milk with bread")
    assert "Traceback" not in done.stderr
    assert notes.read_text() == "# Shopping\n\n- eggs\n- bread\n- flour\n", done.stderr[-2000:]


@pytest.mark.local_model
@needs_model
def test_an_overwrite_under_yes_without_a_terminal_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    notes = tmp_path / "work" / "notes.md"
    notes.write_text("# Shopping\n\n- eggs\n")
    done = run_local(tmp_path, "overwrite notes.md with the text nothing")
    assert notes.read_text() == "# Shopping\n\n- eggs\n", done.stdout + done.stderr[-2000:]
    assert done.returncode == 4, done.stderr[-2000:]  # DENIED: a call was refused
    said = [line for line in (done.stdout + done.stderr).splitlines() if "only a person" in line]
    assert said, done.stdout + done.stderr[-2000:]


@pytest.mark.local_model
@needs_model
def test_run_the_tests_runs_the_projects_test_command(tmp_path: Path) -> None:
    # issue 41: "run the tests" became the command `tests` (exit 127); the project's own
    # declaration of its test command is what a developer runs
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "Makefile").write_text("test:\n\ttouch ran-tests\n")
    done = run_local(tmp_path, "run the tests")
    assert (tmp_path / "work" / "ran-tests").exists(), done.stdout + done.stderr[-2000:]
    assert "make test" in done.stderr, done.stderr[-2000:]
    assert done.returncode == 0, done.stderr[-2000:]
