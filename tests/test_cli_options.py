"""The options of `run` and `chat` are declared once (agentcli.cli.options); the fast parser
that lets them start without Typer agrees with Typer on every line it accepts."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli.cli import options as cli_options
from agentcli.cli.app import run_app
from agentcli.cli.commands import agent_commands, policy_commands

TOKENS = [
    "hi",
    "-",
    "",
    "--model",
    "-m",
    "openai:x",
    "--max-steps",
    "3",
    "-2",
    "2.5",
    "x",
    "--timeout",
    "1.5",
    "--yes",
    "-y",
    "--deny",
    "--allow",
    "run_shell(ls *)",
    "--forbid",
    "--continue",
    "-c",
    "--resume",
    "abc",
    "--debug",
    "--output",
    "-o",
    "json",
    "--cwd",
    ".",
    "--system",
    "be brief",
    "--base-url",
    "--",
    "-h",
    "--help",
    "-yc",
    "--model=m",
    "--bogus",
    "-x",
    "two words",
    "--max-steps=4",
    "--json",
    "--stdin",
    "run_shell",
    "ls -la",
]
COMMANDS = {
    "run": (agent_commands, "run"),
    "chat": (agent_commands, "chat"),
    "policy explain": (policy_commands, "explain_main"),
}


def typer_values(monkeypatch: pytest.MonkeyPatch, command: str, args: list[str]) -> Any:
    """What Typer hands the command for this line, or the exit code when it does not."""
    seen: dict[str, Any] = {}

    def capture(values: dict[str, Any]) -> int:
        seen.update(values)
        return 0

    monkeypatch.setattr(*COMMANDS[command], capture)
    code = run_app([*command.split(), *args])
    return dict(seen) if seen else ("exit", code)


@settings(max_examples=300, deadline=None)
@given(command=st.sampled_from(list(COMMANDS)), args=st.lists(st.sampled_from(TOKENS)))
def test_fast_parse_agrees_with_typer(command: str, args: list[str]) -> None:
    fast = cli_options.parse(command, args)
    if fast is None:
        return  # Typer's to parse
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert typer_values(monkeypatch, command, args) == fast, args


@pytest.mark.parametrize(
    "args",
    [
        ["hi"],
        ["-m", "openai:m", "--max-steps", "3", "--timeout", "2.5", "-y", "hi", "--allow", "a"],
        ["--allow", "a", "--allow", "b", "-o", "jsonl", "-c", "--debug", "-"],
        ["--resume", "abc", "--cwd", "/tmp", "--system", "be brief", "--base-url", "u"],
    ],
)
def test_plain_lines_take_the_fast_path(monkeypatch: pytest.MonkeyPatch, args: list[str]):
    fast = cli_options.parse("run", args)
    assert fast is not None
    assert typer_values(monkeypatch, "run", args) == fast


def test_unusual_lines_are_left_to_typer():
    for args in (
        ["--help"],
        ["--max-steps", "x"],
        ["a", "b"],
        ["--model"],
        ["--", "-x"],
        ["-yc"],
        ["--model=m"],
        ["--bogus"],
        ["--max-steps", "1" * 5000],
        ["--timeout", "+1"],
        ["--max-steps", "٣"],
    ):
        assert cli_options.parse("run", args) is None, args
    assert cli_options.parse("chat", ["hi"]) is None
    assert cli_options.parse("chat", ["-o", "json"]) is None  # run's option only


def test_every_shared_option_reaches_both_commands():
    run = {o.name for o in cli_options.options_of("run")}
    chat = {o.name for o in cli_options.options_of("chat")}
    assert run - chat == {"output"}
    assert {"sandbox", "allow_network", "add_dir", "agent", "model", "yes", "deny"} <= chat
    assert len(chat) == 17


def test_run_imports_neither_typer_nor_pydantic(cli_home, workspace, server):
    from tests.scripted_server import Reply

    server.enqueue(Reply.text(["Hel", "lo"]))
    probe = (
        "import sys; from agentcli.__main__ import main\n"
        "sys.argv = ['agentcli', 'run', '--max-steps', '2', 'hi']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "print(code, sorted({m.split('.')[0] for m, mod in sys.modules.items() if mod is not None}"
        " & {'typer', 'pydantic', 'yaml',"
        " 'click', 'rich', 'prompt_toolkit', 'jsonschema'}), file=sys.stderr)"
    )
    env = {
        "HOME": str(cli_home),
        "AGENTCLI_HOME": str(cli_home / "agentcli"),
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "k",
        "AGENTCLI_MODEL": "openai:scripted-model",
        "NO_COLOR": "1",
    }
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.stdout.strip() == "Hello"
    assert done.stderr.strip().splitlines()[-1] == "0 []", done.stderr
