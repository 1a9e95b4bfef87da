"""The user, not the server, chooses an MCP server's reach. A stdio server with no
`sandbox` set runs read-only and is never tried in a wider profile; what it then fails to
do is said, to the model and on the terminal, in one line naming the setting that would
let it. Real servers nobody here wrote — mcp-server-fetch and mcp-server-git (PyPI, the
dev extra), server-filesystem and server-memory (npm: .ci/run installs them, named in
AGENTCLI_TEST_MCP_FILESYSTEM / _MEMORY; their tests skip without) — are driven through the
installed `agentcli run` with a scripted model, unset and then with their documented
setting, on both backends."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentcli.sandbox.mechanisms import detect
from tests.conftest import RunCli, tool_results
from tests.scripted_server import Reply, ScriptedServer

pytest.importorskip("mcp")
FOUND = detect()
BACKENDS = [
    pytest.param(
        "landlock", marks=pytest.mark.skipif(not FOUND.landlock_abi, reason="no Landlock")
    ),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(not FOUND.bwrap, reason="no bubblewrap")),
]
BIN = Path(sys.executable).parent
FETCH = BIN / "mcp-server-fetch"
GIT = BIN / "mcp-server-git"
FILESYSTEM = os.environ.get("AGENTCLI_TEST_MCP_FILESYSTEM", "")
MEMORY = os.environ.get("AGENTCLI_TEST_MCP_MEMORY", "")
ONLINE = Path(__file__).parent / "fixtures" / "mcp" / "online_server.py"
needs_fetch = pytest.mark.skipif(not FETCH.exists(), reason="mcp-server-fetch not installed")
needs_git = pytest.mark.skipif(not GIT.exists(), reason="mcp-server-git not installed")
needs_filesystem = pytest.mark.skipif(
    not FILESYSTEM or not Path(FILESYSTEM).exists(),
    reason="server-filesystem not installed (.ci/run installs it when npm exists)",
)
needs_memory = pytest.mark.skipif(
    not MEMORY or not Path(MEMORY).exists(),
    reason="server-memory not installed (.ci/run installs it when npm exists)",
)


def configure(cli_home: Path, backend: str, name: str, table: dict[str, Any]) -> None:
    lines = [f'[sandbox]\nbackend = "{backend}"\n', f"[mcp.servers.{name}]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in table.items()]
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")


def one_call(
    run_cli: RunCli, server: ScriptedServer, tool: str, arguments: dict[str, Any], *flags: str
) -> tuple[str, subprocess.CompletedProcess[str]]:
    """The model calls `tool` once; returns what it was given back, and the run."""
    call = {"id": "c1", "name": tool, "arguments": arguments}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["done"]))
    result = run_cli(["run", *(flags or ("--yes",)), "go"], server=server, timeout=120)
    assert result.returncode == 0, result.stderr
    return tool_results(server)["c1"], result


def said_once_on_terminal(result: subprocess.CompletedProcess[str], setting: str) -> None:
    lines = [line for line in result.stderr.splitlines() if setting in line]
    assert len(lines) == 1, result.stderr


@pytest.fixture
def site(tmp_path: Path) -> Iterator[str]:
    """A web page on 127.0.0.1 (the internet, mocked)."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "page.txt").write_text("the page's own words\n", encoding="utf-8")
    handler = partial(SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/page.txt"
    httpd.shutdown()
    httpd.server_close()


class Listener:
    """A port on 127.0.0.1 that counts who connects to it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        # A close alone does not wake an accept() waiting in another thread (Linux): the
        # join then waited its 10 s at every teardown. A shutdown does.
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(timeout=10)


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


# --- a server never widens its own reach


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("flags", [("--deny",), ("--yes",)], ids=["deny", "yes"])
def test_a_server_that_needs_the_network_to_start_is_not_given_it(
    backend: str,
    flags: tuple[str, ...],
    run_cli: RunCli,
    server: ScriptedServer,
    cli_home: Path,
    listener: Listener,
) -> None:
    """Unset, it runs read-only: it cannot start, nothing reaches the port, and the one
    line that says so names the setting (before, it was started in `network`)."""
    args = [str(ONLINE), str(listener.port)]
    configure(cli_home, backend, "online", {"command": sys.executable, "args": args})
    server.enqueue(Reply.text(["done"]))
    result = run_cli(["run", *flags, "go"], server=server, timeout=120)
    assert result.returncode == 0, result.stderr
    assert listener.accepted == 0, "the server was given the network"
    said_once_on_terminal(result, 'mcp.servers.online.sandbox = "network"')
    assert "agentcli mcp add online --sandbox network --" in result.stderr
    assert "mcp__online__ping" not in json.dumps(server.requests[0].json.get("tools", []))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_server_given_the_network_by_the_user_starts(
    backend: str, run_cli: RunCli, server: ScriptedServer, cli_home: Path, listener: Listener
) -> None:
    args = [str(ONLINE), str(listener.port)]
    table = {"command": sys.executable, "args": args, "sandbox": "network"}
    configure(cli_home, backend, "online", table)
    got, _ = one_call(run_cli, server, "mcp__online__ping", {})
    assert got == "pong"
    assert listener.accepted == 1


def test_mcp_list_and_doctor_show_the_default(run_cli: RunCli, cli_home: Path) -> None:
    configure(cli_home, "auto", "online", {"command": sys.executable, "args": [str(ONLINE), "1"]})
    listed = run_cli(["mcp", "list"], timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert "sandbox: read-only (the default: none chosen)" in listed.stdout, listed.stdout
    assert 'mcp.servers.online.sandbox = "network"' in listed.stdout, listed.stdout
    doctor = run_cli(["doctor", "--json"], timeout=60)
    [row] = json.loads(doctor.stdout)["mcp_servers"]
    assert row["sandbox"].startswith("read-only"), row


def test_a_read_write_place_over_the_workspace_needs_a_profile_that_writes_it(
    run_cli: RunCli, cli_home: Path, workspace: Path
) -> None:
    """A server's own read-write `dirs` are written even read-only, but never the
    workspace (its protected paths are watched only where the profile writes it)."""
    table = {"command": sys.executable, "args": [str(ONLINE), "1"], "dirs": [str(workspace)]}
    configure(cli_home, "auto", "online", table)
    listed = run_cli(["mcp", "list", "--json"], timeout=60)
    [row] = json.loads(listed.stdout)["servers"]
    assert row["state"] == "failed", row
    assert "overlaps the workspace" in row["error"] and "workspace-write" in row["error"], row


# --- `mcp add` suggests, and applies nothing


def test_mcp_add_suggests_the_network_for_a_launcher(run_cli: RunCli, cli_home: Path) -> None:
    added = run_cli(["mcp", "add", "files", "--", "npx", "-y", "some-mcp-server"])
    assert added.returncode == 0, added.stderr
    assert "sandbox: read-only" in added.stdout
    [line] = [line for line in added.stdout.splitlines() if line.startswith("suggestion:")]
    assert "agentcli mcp add files --sandbox network --dir '~/.npm' -- npx -y" in line, line
    assert "sandbox" not in (cli_home / "agentcli" / "config.toml").read_text()


@needs_fetch
def test_mcp_add_suggests_the_network_for_open_world_tools(run_cli: RunCli, cli_home: Path) -> None:
    """mcp-server-fetch's `fetch` says openWorldHint: `mcp add` starts it read-only, asks
    for its tools, and suggests the network without choosing it."""
    added = run_cli(["mcp", "add", "fetch", "--", str(FETCH)], timeout=90)
    assert added.returncode == 0, added.stderr
    [line] = [line for line in added.stdout.splitlines() if line.startswith("suggestion:")]
    assert "fetch" in line and "openWorldHint" in line and "--sandbox network" in line, line
    assert "sandbox" not in (cli_home / "agentcli" / "config.toml").read_text()
    chosen = run_cli(["mcp", "add", "f2", "--sandbox", "network", "--", str(FETCH)], timeout=90)
    assert "suggestion:" not in chosen.stdout


# --- real servers: unset, the failing call names the setting; with it, the call works


@needs_fetch
@pytest.mark.parametrize("backend", BACKENDS)
def test_fetch_reaches_the_network_only_when_the_user_says_so(
    backend: str, run_cli: RunCli, server: ScriptedServer, cli_home: Path, site: str
) -> None:
    table: dict[str, Any] = {"command": str(FETCH), "args": ["--allow-private-ips"]}
    configure(cli_home, backend, "fetch", table)
    got, result = one_call(run_cli, server, "mcp__fetch__fetch", {"url": site})
    assert "the page's own words" not in got
    assert 'mcp.servers.fetch.sandbox = "network"' in got, got
    said_once_on_terminal(result, 'mcp.servers.fetch.sandbox = "network"')
    configure(cli_home, backend, "fetch", {**table, "sandbox": "network"})  # as documented
    got, result = one_call(run_cli, server, "mcp__fetch__fetch", {"url": site})
    assert "the page's own words" in got, got
    assert "sandbox =" not in got and "sandbox =" not in result.stderr


@needs_git
@pytest.mark.parametrize("backend", BACKENDS)
def test_git_stages_only_when_the_user_lets_it_write(
    backend: str, run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    git = ["git", "-C", str(workspace), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    (workspace / "README.md").write_text("changed\n", encoding="utf-8")
    table: dict[str, Any] = {"command": str(GIT), "args": ["--repository", str(workspace)]}
    configure(cli_home, backend, "git", table)
    add = {"repo_path": str(workspace), "files": ["README.md"]}
    got, result = one_call(run_cli, server, "mcp__git__git_add", add)
    staged = [*git, "diff", "--cached", "--name-only"]
    assert subprocess.run(staged, capture_output=True, text=True).stdout == ""
    assert 'mcp.servers.git.sandbox = "workspace-write"' in got, got
    said_once_on_terminal(result, 'mcp.servers.git.sandbox = "workspace-write"')
    configure(cli_home, backend, "git", {**table, "sandbox": "workspace-write"})
    got, _ = one_call(run_cli, server, "mcp__git__git_add", add)
    assert subprocess.run(staged, capture_output=True, text=True).stdout == "README.md\n", got


@needs_filesystem
@pytest.mark.parametrize("backend", BACKENDS)
def test_filesystem_writes_only_when_the_user_lets_it(
    backend: str, run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    table: dict[str, Any] = {"command": FILESYSTEM, "args": [str(workspace)]}
    configure(cli_home, backend, "fs", table)
    write = {"path": str(workspace / "new.txt"), "content": "written"}
    got, result = one_call(run_cli, server, "mcp__fs__write_file", write)
    assert not (workspace / "new.txt").exists()
    assert 'mcp.servers.fs.sandbox = "workspace-write"' in got, got
    said_once_on_terminal(result, 'mcp.servers.fs.sandbox = "workspace-write"')
    configure(cli_home, backend, "fs", {**table, "sandbox": "workspace-write"})
    got, _ = one_call(run_cli, server, "mcp__fs__write_file", write)
    assert (workspace / "new.txt").read_text(encoding="utf-8") == "written", got


@needs_memory
@pytest.mark.parametrize("backend", BACKENDS)
def test_memory_writes_its_file_only_where_the_user_named(
    backend: str, run_cli: RunCli, server: ScriptedServer, cli_home: Path, tmp_path: Path
) -> None:
    """Its file outside the workspace (MEMORY_FILE_PATH): hidden until `dirs` names its
    directory, which it then writes while the server stays read-only."""
    store = tmp_path / "memory"
    store.mkdir()
    table: dict[str, Any] = {"command": MEMORY, "env": ["MEMORY_FILE_PATH"]}
    configure(cli_home, backend, "mem", table)
    entity = {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}
    create = {"entities": [entity]}
    env = {"MEMORY_FILE_PATH": str(store / "memory.jsonl")}

    def remember() -> tuple[str, subprocess.CompletedProcess[str]]:
        call = {"id": "c1", "name": "mcp__mem__create_entities", "arguments": create}
        server.enqueue(Reply.tool_calls([call]), Reply.text(["done"]))
        result = run_cli(["run", "--yes", "go"], server=server, env=env, timeout=120)
        assert result.returncode == 0, result.stderr
        return tool_results(server)["c1"], result

    got, result = remember()
    assert not (store / "memory.jsonl").exists()
    setting = f'mcp.servers.mem.dirs = ["{store}"]'
    assert setting in got, got
    said_once_on_terminal(result, setting)
    configure(cli_home, backend, "mem", {**table, "dirs": [str(store)]})  # still read-only
    got, _ = remember()
    assert "wrote the first program" in (store / "memory.jsonl").read_text(encoding="utf-8"), got


@pytest.mark.parametrize("extra", [{}, {"tool_timeout": 60}], ids=["add", "config-set"])
def test_the_command_the_hint_names_gives_the_server_what_it_needs(
    extra: dict[str, Any],
    run_cli: RunCli,
    server: ScriptedServer,
    cli_home: Path,
    listener: Listener,
) -> None:
    """The line's own command, run as it is printed, makes the change: `mcp add` again
    when that writes the whole table, else `config set` of the one key (a table with a
    setting add has no option for keeps it)."""
    import shlex

    args = [str(ONLINE), str(listener.port)]
    configure(cli_home, "auto", "online", {"command": sys.executable, "args": args, **extra})
    server.enqueue(Reply.text(["done"]))
    failed = run_cli(["run", "--yes", "go"], server=server, timeout=120)
    [line] = [line for line in failed.stderr.splitlines() if "(or: agentcli " in line]
    command = shlex.split(re.search(r"\(or: (agentcli [^)]*)\)", line).group(1))  # type: ignore[union-attr]
    assert command[:2] == (["agentcli", "mcp"] if not extra else ["agentcli", "config"]), line
    changed = run_cli(command[1:], timeout=60)
    assert changed.returncode == 0, changed.stderr
    got, result = one_call(run_cli, server, "mcp__online__ping", {})
    assert got == "pong" and listener.accepted == 1, result.stderr
    text = (cli_home / "agentcli" / "config.toml").read_text(encoding="utf-8")
    assert 'sandbox = "network"' in text and ("tool_timeout = 60" in text) is bool(extra)


@needs_git
@pytest.mark.parametrize("backend", BACKENDS)
def test_git_reads_a_repository_outside_the_workspace_once_named(
    backend: str, run_cli: RunCli, server: ScriptedServer, cli_home: Path, tmp_path: Path
) -> None:
    """mcp-server-git says only the path it could not open; the path is there but hidden
    from the server, which is what the line says, with the `dirs` entry that shows it."""
    other = tmp_path / "other-repo"
    other.mkdir()
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    (other / "untracked-file.txt").write_text("x\n", encoding="utf-8")
    table: dict[str, Any] = {"command": str(GIT)}
    configure(cli_home, backend, "git", table)
    status = {"repo_path": str(other)}
    got, result = one_call(run_cli, server, "mcp__git__git_status", status)
    setting = f'mcp.servers.git.dirs = ["{other}:ro"]'
    assert "untracked-file.txt" not in got and setting in got, got
    said_once_on_terminal(result, setting)
    configure(cli_home, backend, "git", {**table, "dirs": [f"{other}:ro"]})
    got, _ = one_call(run_cli, server, "mcp__git__git_status", status)
    assert "untracked-file.txt" in got, got
