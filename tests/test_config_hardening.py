"""Configuration that cannot redirect data: an untrusted project cannot pick the model (and
with it the provider, endpoint and key); instruction files stay in the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import RunCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_config import project_config, system_of, write

SECRET = "PRIVATE-KEY-MATERIAL"


def test_an_untrusted_project_cannot_send_the_conversation_to_another_provider(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    write(project_config(workspace), 'model = "anthropic:claude-sonnet-4-5"\n')
    with ScriptedServer() as evil:
        env = {"ANTHROPIC_BASE_URL": evil.base_url, "ANTHROPIC_API_KEY": "other-key"}
        server.enqueue(Reply.text(["stayed"]))
        result = run_cli(["run", "hi"], server=server, env=env)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "stayed\n"
        assert evil.requests == []
        assert "model" in result.stderr  # the notice names the ignored key


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "home-ssh-id"
    path.write_text(SECRET + "\n")
    return path


@pytest.mark.parametrize("name", ["AGENTS.md", "NOTES.md"])
def test_an_instruction_file_symlinked_out_of_the_workspace_is_not_read(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, secret: Path, name: str
) -> None:
    (workspace / name).symlink_to(secret)
    if name != "AGENTS.md":
        write(project_config(workspace), f'instructions.files = ["{name}"]\n')
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "hi"], server=server)
    assert result.returncode == 0, result.stderr
    assert SECRET not in system_of(server, 0)


def test_an_instruction_file_symlinked_inside_the_workspace_is_read(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "agents.md").write_text("Use tabs, said the project.\n")
    (workspace / "AGENTS.md").symlink_to("docs/agents.md")
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "hi"], server=server)
    assert result.returncode == 0, result.stderr
    assert "Use tabs, said the project." in system_of(server, 0)


@pytest.mark.parametrize("name", ["../home-ssh-id", "/proc/self/environ", "~/.ssh/id_rsa", ""])
def test_instruction_files_outside_the_workspace_are_a_configuration_error(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, secret: Path, name: str
) -> None:
    write(project_config(workspace), f'instructions.files = ["{name}"]\n')
    result = run_cli(["run", "hi"], server=server)
    assert result.returncode == 2
    assert_one_error(result, "instructions.files", "inside the workspace")
    assert server.requests == []


def test_a_fifo_as_agents_md_does_not_hang_the_start(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    os.mkfifo(workspace / "AGENTS.md")
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "hi"], server=server, timeout=20)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("tools.concurrency = 0", "tools.concurrency must be at least 1"),
        ("tools.concurrency = -3", "tools.concurrency must be at least 1"),
        ("tools.max_invalid_calls = 0", "tools.max_invalid_calls must be at least 1"),
        ("max_steps = -1", "max_steps must be at least 1"),
        ("shell.output_limit = 0", "shell.output_limit must be at least 100"),
        ("context.keep_turns = -1", "context.keep_turns must be at least 0"),
        ("context.window = -5", "context.window must be at least 100"),
        ("context.threshold = 0", "context.threshold must be at least 0.05"),
        ("context.threshold = nan", "context.threshold must be a finite number"),
        ("timeout = nan", "timeout must be a finite number"),
        ("timeout = inf", "timeout must be a finite number"),
        ("timeout = -1", "timeout must be at least"),
        ("tools.concurrency = 99999999999", "tools.concurrency must be at most 256"),
        ('[context.windows]\n"openai:gpt-4o-mini" = 0', "must be at least 100"),
    ],
)
def test_every_number_in_the_configuration_is_checked_where_it_is_read(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, line: str, needle: str
) -> None:
    from tests.test_e2e_config import user_config

    write(user_config(cli_home), f'model = "openai:gpt-4o-mini"\n{line}\n')
    result = run_cli(["run", "hi"], server=server, timeout=20)
    assert result.returncode == 2, result.stderr
    assert_one_error(result, needle)
    assert server.requests == []


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--timeout", "nan"], "--timeout must be a finite number"),
        (["--timeout", "inf"], "--timeout must be a finite number"),
        (["--timeout", "-1"], "--timeout must be a positive number"),
        (["--max-steps", "0"], "--max-steps must be at least 1"),
    ],
)
def test_numbers_from_flags_are_checked(
    run_cli: RunCli, server: ScriptedServer, flags: list[str], needle: str
) -> None:
    result = run_cli(["run", *flags, "hi"], server=server, timeout=20)
    assert result.returncode == 2, result.stderr
    assert_one_error(result, needle)


def _tool_result(server: ScriptedServer) -> str:
    [tool] = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    return tool["content"]


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ('{"path": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper than 64 levels"),
        ('{"path": ' + '{"a": ' * 70 + "1" + "}" * 70 + "}", "nested deeper than 64 levels"),
        ('{"command": "sleep 0", "timeout": NaN}', "contain NaN"),
        ('{"command": "sleep 0", "timeout": Infinity}', "contain Infinity"),
        ('{"command": "sleep 0", "timeout": -Infinity}', "contain -Infinity"),
    ],
)
def test_hostile_tool_arguments_are_a_clear_error_result(
    run_cli: RunCli, server: ScriptedServer, raw: str, needle: str
) -> None:
    name = "read_file" if "path" in raw else "run_shell"
    server.enqueue(
        Reply.tool_calls([{"id": "t1", "name": name, "arguments": raw}]), Reply.text(["ok"])
    )
    result = run_cli(["run", "--yes", "go"], server=server)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"
    assert needle in _tool_result(server)
    assert "the tool did not run" in _tool_result(server)


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", '"soon"'])
def test_a_command_tool_timeout_is_checked(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, value: str
) -> None:
    from tests.test_e2e_config import user_config

    write(user_config(cli_home), f'[tools.build]\ncommand = "make"\ntimeout = {value}\n')
    result = run_cli(["run", "hi"], server=server, timeout=20)
    assert result.returncode == 2, result.stderr
    assert_one_error(result, "tools.build.timeout")


def _everything_written(result, cli_home: Path) -> str:  # type: ignore[no-untyped-def]
    from tests.test_e2e_config import sessions_of

    files = "".join(p.read_text() for p in sessions_of(cli_home))
    return result.stdout + result.stderr + files


@pytest.mark.parametrize("output", ["text", "jsonl"])
def test_credentials_in_the_base_url_are_sent_as_basic_auth_and_never_shown(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, output: str
) -> None:
    import base64

    with_credentials = server.base_url.replace("://", "://alice:s3cr%40t@")
    server.enqueue(Reply.error(404, "no such model"))
    failed = run_cli(["run", "-o", output, "hi"], env={"OPENAI_BASE_URL": with_credentials})
    assert failed.returncode != 0
    assert "s3cr" not in _everything_written(failed, cli_home)
    assert "alice" not in _everything_written(failed, cli_home)
    expected = "Basic " + base64.b64encode(b"alice:s3cr@t").decode()
    assert server.requests[0].headers.get("authorization") == expected

    refused = "http://alice:s3cr%40t@127.0.0.1:9/v1"  # nothing listens on the discard port
    unreachable = run_cli(["run", "-o", output, "hi"], env={"OPENAI_BASE_URL": refused})
    assert unreachable.returncode != 0
    assert "127.0.0.1:9" in unreachable.stderr + unreachable.stdout
    assert "s3cr" not in _everything_written(unreachable, cli_home)


@pytest.mark.parametrize("flag", ["--base-url", "--agent"])
def test_a_password_on_the_command_line_is_refused(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, flag: str
) -> None:
    """agentcli's argv is what `ps` shows every process (a sandboxed command's too): a
    password there is refused before anything runs, and the error does not repeat it."""
    with_credentials = server.base_url.replace("://", "://alice:s3cr%40t@")
    result = run_cli(["run", flag, with_credentials, "hi"])
    assert result.returncode == 2
    assert_one_error(result, flag, "carries a password", "environment variable")
    assert "s3cr" not in _everything_written(result, cli_home)
    assert server.requests == []


def test_timeout_ends_the_run_whatever_a_tool_is_blocked_in(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    """A tool stuck in the kernel in a worker thread (here: opening a FIFO nobody writes,
    injected into read_file) cannot be stopped; the run must end at --timeout anyway."""
    import time

    hooks = tmp_path / "hooks"
    hooks.mkdir()
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    (hooks / "sitecustomize.py").write_text(
        "import os\n"
        "import agentcli.tools.read_file as read_file\n"
        "def blocked(*args, **kwargs):\n"
        "    open(os.environ['BLOCKING_FIFO'], 'rb').read()\n"
        "read_file.read_lines = blocked\n"
    )
    (workspace / "notes.txt").write_text("hello\n")
    read = {"id": "r1", "name": "read_file", "arguments": {"path": "notes.txt"}}
    server.enqueue(Reply.tool_calls([read]), Reply.text(["never"]))
    env = {"PYTHONPATH": str(hooks), "BLOCKING_FIFO": str(fifo)}
    started = time.monotonic()
    result = run_cli(["run", "--timeout", "2", "go"], server=server, env=env, timeout=30)
    took = time.monotonic() - started
    assert result.returncode == 3, result.stderr  # the documented code of --timeout
    assert "--timeout" in result.stderr
    assert took < 2 + 2 + 3, f"the run took {took:.1f}s"  # timeout, 2 s, start-up under load
