"""Custom commands headless, through the installed CLI against the scripted model server:
`agentcli run /name ARGS` sends the command's prompt ($ARGUMENTS, $1…, a namespace, Claude
Code's and Gemini CLI's files), its `@path`s attach, its `model` takes the run, and its
`allowed-tools` narrows what runs and never widens it; a file that cannot be a command is
one line naming it; a project's commands count once the workspace is trusted."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RunCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer


def command_file(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def sent(server: ScriptedServer, request: int = 0) -> str:
    """The user message the run sent."""
    messages = server.requests[request].json["messages"]
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def results(server: ScriptedServer) -> dict[str, str]:
    messages = server.requests[-1].json["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m.get("role") == "tool"}


def calls(*specs: tuple[str, dict]) -> Reply:
    return Reply.tool_calls(
        [{"id": f"c{i}", "name": name, "arguments": args} for i, (name, args) in enumerate(specs)]
    )


REVIEW = """---
description: Review a file
argument-hint: "[file] [focus]"
---
Review $1 with a focus on $2.
Everything asked: $ARGUMENTS
"""


def test_a_users_command_sends_its_prompt_with_the_arguments_in_place(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    command_file(cli_home / "agentcli" / "commands", "review.md", REVIEW)
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", '/review "src/app.py" speed'], server=server)
    assert result.returncode == 0, result.stderr
    assert sent(server) == (
        'Review src/app.py with a focus on speed.\nEverything asked: "src/app.py" speed'
    )


def test_a_subfolder_is_a_namespace_and_arguments_without_a_place_are_appended(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    assert run_cli(["trust"]).returncode == 0
    command_file(workspace / ".agentcli" / "commands", "git/commit.md", "Commit the staged work.")
    server.enqueue(Reply.text(["ok"]))
    assert run_cli(["run", "/git:commit fix the parser"], server=server).returncode == 0
    assert sent(server) == "Commit the staged work.\n\nARGUMENTS: fix the parser"


def test_claude_codes_gemini_clis_and_opencodes_commands_work_as_they_are(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    command_file(
        cli_home / ".claude" / "commands",
        "explain.md",
        "---\nargument-hint: [topic]\n---\nExplain $ARGUMENTS simply.\n",
    )
    command_file(
        cli_home / ".gemini" / "commands",
        "refactor/pure.toml",
        'description = "Make it pure"\nprompt = "Refactor {{args}} as @{notes.txt} says."\n',
    )
    command_file(cli_home / ".config" / "opencode" / "commands", "tests.md", "Run the $1 tests.")
    server.enqueue(Reply.text(["ok"]), Reply.text(["ok"]), Reply.text(["ok"]))
    assert run_cli(["run", "/explain monads"], server=server).returncode == 0
    assert run_cli(["run", "/refactor:pure utils.py"], server=server).returncode == 0
    assert run_cli(["run", "/tests unit"], server=server).returncode == 0
    assert sent(server, 0) == "Explain monads simply."
    assert sent(server, 1).startswith("Refactor utils.py as @notes.txt says.\n\n<file path=")
    assert sent(server, 2) == "Run the unit tests."


def test_a_path_in_the_commands_prompt_attaches_the_file(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    command_file(cli_home / "agentcli" / "commands", "notes.md", "Summarise @notes.txt briefly.")
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "/notes"], server=server)
    assert result.returncode == 0, result.stderr
    message = sent(server)
    assert message.startswith("Summarise @notes.txt briefly.")
    assert '<file path="notes.txt">\nfirst note\nsecond note\n' in message
    assert "attached notes.txt" in result.stderr


def test_piped_context_goes_below_the_commands_prompt(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    command_file(cli_home / "agentcli" / "commands", "why.md", "Why does $ARGUMENTS fail?")
    server.enqueue(Reply.text(["ok"]))
    assert run_cli(["run", "/why the build"], server=server, input="error: x\n").returncode == 0
    assert sent(server) == "Why does the build fail?\n\n<stdin>\nerror: x\n</stdin>"


def test_the_commands_model_takes_the_run(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    command_file(
        cli_home / "agentcli" / "commands", "quick.md", "---\nmodel: small-model\n---\nBe quick."
    )
    server.enqueue(Reply.text(["ok"]), Reply.text(["ok"]))
    assert run_cli(["run", "/quick"], server=server).returncode == 0
    assert run_cli(["run", "plain"], server=server).returncode == 0
    assert server.requests[0].json["model"] == "small-model"
    assert server.requests[1].json["model"] != "small-model"


NARROW = """---
description: Look at the status
allowed-tools: Bash(git status:*), Read, Write(notes.txt)
---
Look at the status.
"""


def test_allowed_tools_narrow_what_runs_and_never_widen_it(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    """Outside the command's allowed-tools a call does not run, even with --yes; inside
    them it is still decided by the policy: without --yes and a terminal, a write inside
    them is refused as any write would be."""
    command_file(cli_home / "agentcli" / "commands", "check.md", NARROW)
    listed = [
        ("run_shell", {"command": "git status --short"}),
        ("run_shell", {"command": "touch made-by-shell.txt"}),
        ("read_file", {"path": "README.md"}),
        ("write_file", {"path": "other.txt", "content": "x"}),
        ("list_directory", {"path": "."}),
    ]
    server.enqueue(calls(*listed), Reply.text(["done"]))
    # Exit 4: calls were refused (by the command's allowed-tools, as by a rule).
    assert run_cli(["run", "--yes", "/check"], server=server).returncode == 4
    got = results(server)
    assert "exit code" in got["c0"]
    assert "# Demo project" in got["c2"]
    for refused in ("c1", "c3", "c4"):
        assert "/check lets only its allowed-tools run" in got[refused], got[refused]
        assert "run_shell(git status *), read_file, write_file(notes.txt)" in got[refused]
    assert not (workspace / "made-by-shell.txt").exists()
    assert not (workspace / "other.txt").exists()

    server.enqueue(
        calls(("write_file", {"path": "notes.txt", "content": "new"})), Reply.text(["x"])
    )
    result = run_cli(["run", "/check"], server=server)  # no --yes, no terminal: asks → no
    assert "lets only its allowed-tools" not in results(server)["c0"]
    assert "denied" in results(server)["c0"]
    assert (workspace / "notes.txt").read_text().startswith("first note")
    assert result.returncode == 4


def test_a_command_file_that_cannot_be_one_is_one_line_naming_it(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    commands = cli_home / "agentcli" / "commands"
    command_file(commands, "broken.md", "---\nargument-hint: [a] [b]\n---\nBody")
    command_file(cli_home / ".gemini" / "commands", "shell.toml", 'prompt = "Run !{ls} now"\n')
    command_file(commands, "help.md", "Help me.")
    for name, needles in (
        ("help", ("commands/help.md", "agentcli's own command")),
        ("broken", ("commands/broken.md", "not valid YAML", "line 2", "in quotes")),
        ("shell", (".gemini/commands/shell.toml", "!{...}", "run_shell")),
    ):
        result = run_cli(["run", f"/{name} x"], server=server)
        assert result.returncode == 2
        assert_one_error(result, f"/{name} was skipped", *needles)
    assert server.requests == []  # nothing was sent


def test_an_untrusted_projects_commands_are_not_used_and_a_typo_is_said(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    command_file(workspace / ".claude" / "commands", "deploy.md", "Deploy everything now.")
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "/deploy"], server=server)
    assert result.returncode == 0
    assert sent(server) == "/deploy"
    assert "no custom command /deploy; sent as written" in result.stderr

    assert run_cli(["trust"]).returncode == 0
    server.enqueue(Reply.text(["ok"]))
    assert run_cli(["run", "/deploy"], server=server).returncode == 0
    assert sent(server, 1) == "Deploy everything now."


def test_a_prompt_that_is_a_path_is_sent_as_it_is_without_a_note(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "/usr is full"], server=server)
    assert result.returncode == 0
    assert sent(server) == "/usr is full"
    assert "custom command" not in result.stderr
