"""End-to-end: the edges a fault pass over local files and habit files found (config.toml's
free-form tables, session files, habit files' front matter, hooks' answers), each one clear
line naming the file with the documented exit code (README "Exit codes": 2 for a usage or
configuration error, 4 for a call a PreToolUse hook refused), never an internal error; a
guard's answer of the wrong shape refuses its call."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import RunCli, assert_one_error, error_lines
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_config import user_config
from tests.test_e2e_sessions import sessions_dir

# (config.toml, what its one line says, the line it names)
BAD_TABLE_VALUES = {
    "api_key_env a list": ('[providers.openai]\napi_key_env = ["A"]', "must be a string", 2),
    "api_key_env a number": ("[providers.openai]\napi_key_env = 5", "must be a string", 2),
    "api_key_env nan": ("[providers.openai]\napi_key_env = nan", "must be a string", 2),
    "api_key_env a table": ("[providers.openai]\napi_key_env = {a = 1}", "must be a string", 2),
    "api_key_env a date": ("[providers.openai]\napi_key_env = 1979-05-27", "date or time", 2),
    "api_key_env with =": ('[providers.openai]\napi_key_env = "A=B"', "environment variable", 2),
    "model a date": ("[providers.openai]\nmodel = 1979-05-27", "date or time", 2),
    "model a number": ("\n[providers.openai]\nmodel = 5", "must be a string", 3),
    "model with an escape": ('[providers.openai]\nmodel = "x\\u001b[2J"', "control character", 2),
    "base_url a number": ("[providers.openai]\nbase_url = 5", "must be a string", 2),
    "models a number": ("[providers.openai]\nmodels = 5", "table of alias", 2),
    "an alias a number": ("[providers.openai]\nmodels = { big = 5 }", "must be a string", 2),
    "a provider a number": ("[providers]\nopenai = 5", "providers.openai must be a table", 2),
    "providers a number": ("providers = 5", "[providers.NAME]", 1),
    "hooks a number": ("max_steps = 3\nhooks = 5", "[[hooks.PreToolUse]]", 2),
    "a window a string": ('[context.windows]\n"openai:gpt-4.1" = "big"', "number of tokens", 2),
    "a window a float": ('[context.windows]\n"openai:x" = 5.5', "number of tokens", 2),
    "a window too small": ('[context.windows]\n"openai:gpt-4.1" = 50', "at least 100", 2),
    "a window a date": ('[context.windows]\n"openai:x" = 1979-05-27', "date or time", 2),
    "a time": ("[requests]\nmax_wait = 07:32:00", "date or time", 2),
    "a date in an array": ('[mcp.servers.x]\ncommand = "x"\nargs = [1979-05-27]', "date", 3),
}


@pytest.mark.parametrize(
    "command", [["run", "hi"], ["config", "show"], ["config", "show", "--json"]]
)
@pytest.mark.parametrize("case", sorted(BAD_TABLE_VALUES))
def test_a_wrong_value_in_a_free_form_table_is_one_line_with_its_file_and_line(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, case: str, command: list[str]
) -> None:
    text, needle, line = BAD_TABLE_VALUES[case]
    path = user_config(cli_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")
    result = run_cli(command, server=server)
    assert result.returncode == 2, result.stderr
    assert_one_error(result, f"{path}, line {line}:", needle)
    assert "internal error" not in result.stderr and "warning" not in result.stderr
    assert server.requests == []


def test_a_bom_at_the_start_of_config_toml_is_read_past(run_cli: RunCli, cli_home: Path) -> None:
    path = user_config(cli_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("\ufeffmax_steps = 3\n".encode())
    result = run_cli(["config", "show"])
    assert result.returncode == 0, result.stderr
    [row] = [row for row in result.stdout.splitlines() if row.startswith("max_steps ")]
    assert row.split()[1] == "3" and str(path) in row


def test_config_show_takes_debug_before_or_after_it(run_cli: RunCli) -> None:
    for args in (["config", "show", "--debug"], ["--debug", "config", "show"]):
        result = run_cli(args)
        assert result.returncode == 0, result.stderr
        assert "max_steps" in result.stdout
    misplaced = run_cli(["-y", "config", "show"])
    assert misplaced.returncode == 2
    assert_one_error(misplaced, "before 'config'", "agentcli config show")


# --- sessions ----------------------------------------------------------------------------

SESSION_ID = "20261204-200031-c62ba5"


@pytest.mark.parametrize("kind", ["a directory", "a FIFO"])
def test_sessions_rm_of_what_is_not_a_session_file_is_the_line_show_gives(
    run_cli: RunCli, cli_home: Path, kind: str
) -> None:
    place = sessions_dir(cli_home) / f"{SESSION_ID}.jsonl"
    place.parent.mkdir(parents=True)
    if kind == "a directory":
        place.mkdir()
    else:
        os.mkfifo(place)
    shown = run_cli(["sessions", "show", SESSION_ID])
    removed = run_cli(["sessions", "rm", SESSION_ID])
    assert removed.returncode == shown.returncode == 1, removed.stderr
    line = assert_one_error(removed, str(place), f"it is {kind}, not a regular file")
    assert error_lines(shown.stderr) == [line]
    assert "internal error" not in removed.stderr
    assert os.path.lexists(place)  # left as it is


def test_resume_with_an_empty_id_is_a_usage_error_not_a_new_session(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    result = run_cli(["run", "--resume", "", "hi"], server=server)
    assert result.returncode == 2, result.stderr
    assert_one_error(result, "no session ''")
    assert server.requests == []
    assert not sessions_dir(cli_home).exists() or not any(sessions_dir(cli_home).iterdir())


# --- habit files -------------------------------------------------------------------------


def bomb(levels: int) -> str:
    """Front matter whose aliases of aliases build 9**levels items (a "billion laughs")."""
    lines = ["metadata:", "  a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(levels - 1):
        name, inner = chr(98 + i), chr(97 + i)
        lines.append(f"  {name}: &{name} [{', '.join([f'*{inner}'] * 9)}]")
    return "\n".join(lines)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_skill_whose_front_matter_is_an_alias_bomb_is_skipped(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """A small bomb (9**5 items, built in a moment): without the refusal it is a skill whose
    metadata is megabytes; with it, the skill is skipped and the run is the others'."""
    skills = cli_home / ".claude" / "skills"
    write(skills / "bomb" / "SKILL.md", f"---\nname: bomb\ndescription: b\n{bomb(5)}\n---\n")
    write(skills / "good" / "SKILL.md", "---\nname: good\ndescription: Fine.\n---\nbody\n")
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "hi"], server=server)
    assert result.returncode == 0, result.stderr
    system = server.requests[0].json["messages"][0]["content"]
    assert "good" in system and "bomb/SKILL.md" not in system
    assert len(system) < 100_000


@pytest.mark.parametrize(
    ("front_matter", "needles"),
    [
        (f"description: d\n{bomb(9)}", ("YAML alias (*a, line 5)",)),
        ('model: "openai:x\\e[2J"', ("control character",)),
    ],
    ids=["alias-bomb", "model-escape"],
)
def test_a_command_file_that_cannot_be_used_is_one_line_naming_it(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, front_matter: str, needles: tuple
) -> None:
    write(cli_home / ".claude" / "commands" / "bad.md", f"---\n{front_matter}\n---\nhi\n")
    result = run_cli(["run", "/bad"], server=server)
    assert result.returncode == 2, result.stderr
    assert_one_error(result, "/bad was skipped", "~/.claude/commands/bad.md", *needles)
    assert server.requests == []


# --- hooks -------------------------------------------------------------------------------

# (what the hook does, what the refused call's result says)
WRONG_ANSWERS = {
    **{
        answer: (f"echo '{answer}'", "gave an answer agentcli cannot read")
        for answer in [
            "[1, 2]",
            '"deny"',
            "null",
            "5",
            '{"continue": "false"}',
            '{"continue": 0}',
            '{"hookSpecificOutput": []}',
            '{"hookSpecificOutput": {"permissionDecision": "DENY"}}',
            '{"decision": 5}',
            '{"systemMessage": 5}',
        ]
    },
    "killed by a signal": ("kill -SEGV $$", "was killed by SIGSEGV"),
}


def hook(cli_home: Path, tmp_path: Path, event: str, body: str) -> Path:
    program = write(tmp_path / "hook.sh", f"#!/bin/sh\n{body}\n")
    program.chmod(0o755)
    write(
        user_config(cli_home),
        f'[[hooks.{event}]]\nmatcher = "*"\ncommand = "{program}"\ntimeout = 10\n',
    )
    return program


def write_call(server: ScriptedServer) -> None:
    arguments = {"path": "made.txt", "content": "x"}
    server.enqueue(
        Reply.tool_calls([{"id": "c1", "name": "write_file", "arguments": arguments}]),
        Reply.text(["done"]),
    )


@pytest.mark.parametrize("case", sorted(WRONG_ANSWERS))
def test_a_pretooluse_answer_of_the_wrong_shape_refuses_the_call(
    run_cli: RunCli,
    server: ScriptedServer,
    cli_home: Path,
    workspace: Path,
    tmp_path: Path,
    case: str,
) -> None:
    body, needle = WRONG_ANSWERS[case]
    hook(cli_home, tmp_path, "PreToolUse", body)
    write_call(server)
    result = run_cli(["run", "--yes", "write it"], server=server)
    assert result.returncode == 4, result.stderr
    assert not (workspace / "made.txt").exists()
    [content] = [m["content"] for m in server.requests[-1].json["messages"] if m["role"] == "tool"]
    assert needle in content and "exited with -" not in content, content
    assert "a call its guard could not check does not run" in content
    assert "internal error" not in result.stderr


def test_a_posttooluse_answer_of_the_wrong_shape_is_one_warning(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path, tmp_path: Path
) -> None:
    hook(cli_home, tmp_path, "PostToolUse", "echo '[1, 2]'")
    write_call(server)
    result = run_cli(["run", "--yes", "write it"], server=server)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "JSON but an array" in warnings[0], result.stderr


@pytest.mark.parametrize("timeout", ["inf", "1e309", "-inf", "nan"])
def test_a_hook_timeout_of_infinity_is_refused(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, timeout: str
) -> None:
    write(user_config(cli_home), f'[[hooks.PreToolUse]]\ncommand = "true"\ntimeout = {timeout}\n')
    result = run_cli(["run", "hi"], server=server)
    assert result.returncode == 2, result.stderr
    assert_one_error(result, "config.toml", "timeout must be a finite number of seconds")
    assert server.requests == []


@pytest.mark.parametrize("command", ["rm", "show", "export"])
@pytest.mark.parametrize("reference", ["../../outside", "/abs/outside", "..", "*"])
def test_a_session_id_is_a_name_never_a_path(
    run_cli: RunCli, cli_home: Path, tmp_path: Path, command: str, reference: str
) -> None:
    """`sessions rm ../../x` removed x.jsonl outside the sessions directory; an absolute
    one was an internal error; `*` was a glob."""
    sessions = sessions_dir(cli_home)
    sessions.mkdir(parents=True)
    (sessions / f"{SESSION_ID}.jsonl").write_text("{}\n")  # one session: `*` would match it
    outside = sessions.parent.parent / "outside.jsonl"  # ../../outside from the directory
    outside.write_text("{}\n")
    given = reference.replace("/abs/outside", str(outside.with_suffix("")))
    result = run_cli(["sessions", command, given])
    assert result.returncode == 2, result.stderr
    assert_one_error(result, "no session")
    assert outside.exists() and (sessions / f"{SESSION_ID}.jsonl").exists()
