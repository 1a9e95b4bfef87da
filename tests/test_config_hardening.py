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
