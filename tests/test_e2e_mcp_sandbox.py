"""MCP stdio servers run in the sandbox as commands do — none of Claude Code, Codex or
Gemini CLI confine them. A server written with the official SDK, driven through the
installed `agentcli run --yes`, tries the user's key, the workspace, the repository's hooks
and the network, in each profile; `none` shows each attempt would work unconfined."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentcli.sandbox.mechanisms import detect
from tests.conftest import RunCli, tool_results
from tests.scripted_server import Reply, ScriptedServer

pytest.importorskip("mcp")
FOUND = detect()
SERVER = Path(__file__).parent / "fixtures" / "mcp" / "files_server.py"
SECRET = "mcp-secret-" + "m" * 10
BACKENDS = [
    pytest.param(
        "landlock", marks=pytest.mark.skipif(not FOUND.landlock_abi, reason="no Landlock")
    ),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(not FOUND.bwrap, reason="no bubblewrap")),
]


def configure(cli_home: Path, backend: str, profile: str | None) -> None:
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    chosen = f'sandbox = "{profile}"\n' if profile else ""
    config.write_text(
        f'[sandbox]\nbackend = "{backend}"\n\n[mcp.servers.files]\n'
        f"command = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(SERVER))}]\n{chosen}"
    )


def attempts(key: Path, workspace: Path, port: int) -> list[dict]:
    calls = {
        "key": ("read", {"path": str(key)}),
        "readme": ("read", {"path": str(workspace / "README.md")}),
        "write": ("write", {"path": str(workspace / "by-server.txt"), "text": "x"}),
        "hook": ("write", {"path": str(workspace / ".git" / "hooks" / "pre-commit"), "text": "x"}),
        "net": ("connect", {"port": port}),
    }
    return [
        {"id": cid, "name": f"mcp__files__{tool}", "arguments": args}
        for cid, (tool, args) in calls.items()
    ]


@pytest.fixture
def key(cli_home: Path) -> Path:
    path = cli_home / ".ssh" / "id_ed25519"
    path.parent.mkdir()
    path.write_text(SECRET)
    return path


# profile: (key read, workspace write, network)
REACH = {
    None: (False, False, False),  # none chosen: read-only
    "workspace-write": (False, True, False),
    "network": (False, True, True),
    "none": (True, True, True),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("profile", list(REACH), ids=lambda p: p or "unchosen")
def test_a_stdio_server_reaches_what_its_profile_lets_it(
    backend: str,
    profile: str | None,
    run_cli: RunCli,
    server: ScriptedServer,
    workspace: Path,
    cli_home: Path,
    key: Path,
) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    configure(cli_home, backend, profile)
    port = int(server.base_url.split(":")[-1].split("/")[0])
    server.enqueue(Reply.tool_calls(attempts(key, workspace, port)), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "go"], server=server, timeout=90)
    assert result.returncode == 0, result.stderr
    got = tool_results(server)
    reads_key, writes, network = REACH[profile]
    assert (SECRET in got["key"]) is reads_key, got["key"]
    assert "Demo project" in got["readme"]
    assert (workspace / "by-server.txt").exists() is writes, got["write"]
    assert got["net"].startswith("connected") is network, got["net"]
    if profile != "none":
        assert not (workspace / ".git" / "hooks" / "pre-commit").exists()


def test_mcp_list_shows_the_profile_it_runs_in(run_cli: RunCli, cli_home: Path) -> None:
    configure(cli_home, "auto", None)
    listed = run_cli(["mcp", "list"], timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert "sandbox: read-only (the default: none chosen)" in listed.stdout
    configure(cli_home, "auto", "network")
    listed = run_cli(["mcp", "list", "--json"], timeout=60)
    [row] = json.loads(listed.stdout)["servers"]
    assert (row["sandbox"], row["sandboxChosen"]) == ("network", True)


def test_mcp_add_records_the_profile_a_person_chose(run_cli: RunCli, cli_home: Path) -> None:
    added = run_cli(["mcp", "add", "files", "--sandbox", "workspace-write", "--", "srv"])
    assert added.returncode == 0, added.stderr
    text = (cli_home / "agentcli" / "config.toml").read_text()
    assert 'sandbox = "workspace-write"' in text
    bad = run_cli(["mcp", "add", "other", "--sandbox", "everything", "--", "srv"])
    assert bad.returncode == 2 and "--sandbox" in bad.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_server_installed_by_npm_starts_through_its_bin_link(
    backend: str, run_cli: RunCli, cli_home: Path, tmp_path: Path
) -> None:
    """`npm install` puts a server at node_modules/.bin/NAME, a link into its package, whose
    dependencies are the package's siblings: the name it is started by, the package and
    those siblings must all be readable, wherever the install is (here outside the home and
    the workspace, as `npm install --prefix "$(mktemp -d)"` puts it)."""
    modules = tmp_path / "install" / "node_modules"
    (modules / ".bin").mkdir(parents=True)
    (modules / "dep").mkdir()
    (modules / "dep" / "real_server.py").write_text(SERVER.read_text())
    (modules / "srv" / "dist").mkdir(parents=True)
    script = modules / "srv" / "dist" / "index.py"
    script.write_text(
        f"#!{sys.executable}\nimport runpy, pathlib\n"
        "here = pathlib.Path(__file__).resolve().parents[2]\n"
        "runpy.run_path(str(here / 'dep' / 'real_server.py'), run_name='__main__')\n"
    )
    script.chmod(0o755)
    (modules / ".bin" / "srv").symlink_to("../srv/dist/index.py")
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f'[sandbox]\nbackend = "{backend}"\n\n[mcp.servers.npm]\n'
        f"command = {json.dumps(str(modules / '.bin' / 'srv'))}\n"
    )
    listed = run_cli(["mcp", "list", "--json"], timeout=60)
    [row] = json.loads(listed.stdout)["servers"]
    assert row["state"] == "running", row
    assert row["sandbox"] == "read-only"
