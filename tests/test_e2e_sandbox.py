"""The sandbox through the installed CLI, against the scripted model server: the CI contract
(`--yes` approves inside the sandbox, never out of it; the network takes --allow-network),
secrets that a command the policy runs freely cannot reach, processes that cannot outlive
even a `kill -9` of agentcli, `doctor`, and configuration that a workspace cannot loosen."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import psutil
import pytest

from agentcli.sandbox.mechanisms import detect
from tests.conftest import RunCli, StartCli, use_backend
from tests.scripted_server import Reply, ScriptedServer

FOUND = detect()
pytestmark = pytest.mark.skipif(FOUND.backend is None, reason="no sandbox on this host")
SECRET = "id-ed25519-private-" + "x" * 8
BACKENDS = [
    pytest.param(
        "landlock", marks=pytest.mark.skipif(not FOUND.landlock_abi, reason="no Landlock")
    ),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(not FOUND.bwrap, reason="no bubblewrap")),
]


def shell(command: str, **extra: object) -> Reply:
    return Reply.tool_calls([{"name": "run_shell", "arguments": {"command": command, **extra}}])


def tool_result(server: ScriptedServer, request: int = 1) -> str:
    return server.requests[request].json["messages"][-1]["content"]


@pytest.fixture
def key_in_home(cli_home: Path) -> Path:
    key = cli_home / ".ssh" / "id_ed25519"
    key.parent.mkdir()
    key.write_text(SECRET)
    return key


@pytest.mark.parametrize("backend", BACKENDS)
def test_yes_approves_inside_the_sandbox_not_out_of_it(
    backend: str, run_cli: RunCli, server: ScriptedServer, cli_home: Path, key_in_home: Path
) -> None:
    use_backend(cli_home, backend)
    server.enqueue(shell(f"cat {key_in_home}"), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "show the key"], server=server)
    assert result.returncode == 0, result.stderr
    content = tool_result(server)
    assert SECRET not in content
    assert "sandbox: workspace-write (it sees only the workspace and system files" in content

    server.enqueue(shell(f"cat {key_in_home}"), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "--sandbox", "none", "show the key"], server=server)
    assert SECRET in tool_result(server, 3)  # without the sandbox, --yes reads it


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_command_run_without_asking_cannot_read_the_api_key(
    backend: str, run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """`grep` over /proc is what an attacker tries for the key agentcli was started with;
    with --deny, only what the policy runs freely runs at all."""
    use_backend(cli_home, backend)
    key = "sk-test-" + os.urandom(8).hex()
    command = "grep -a -h -o 'sk-test-[0-9a-f]*' /proc/*/environ"
    for flags in (["--deny"], ["--yes"]):
        server.enqueue(shell(command), Reply.text(["done"]))
        result = run_cli(["run", *flags, "look"], server=server, env={"OPENAI_API_KEY": key})
        assert result.returncode in (0, 4), result.stderr  # 4: denied by the classifier
        assert key not in tool_result(server, len(server.requests) - 1)
    server.enqueue(shell(command), Reply.text(["done"]))
    run_cli(
        ["run", "--yes", "--sandbox", "none", "look"], server=server, env={"OPENAI_API_KEY": key}
    )
    assert key in tool_result(server, len(server.requests) - 1)


def test_the_network_takes_allow_network_under_yes(run_cli: RunCli, server: ScriptedServer) -> None:
    port = server.base_url.split(":")[-1].split("/")[0]
    command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED"
    asks = {"sandbox": "network", "justification": "talk to the local server"}
    server.enqueue(shell(command, **asks), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "connect"], server=server)
    denied = tool_result(server)
    assert "--allow-network" in denied and "output:\nCONNECTED" not in denied, result.stderr

    server.enqueue(shell(command, **asks), Reply.text(["done"]))
    run_cli(["run", "--yes", "--allow-network", "connect"], server=server)
    assert "output:\nCONNECTED" in tool_result(server, 3)

    server.enqueue(shell(command), Reply.text(["done"]))  # not asked for: no network
    run_cli(["run", "--yes", "--allow-network", "connect"], server=server)
    closed = tool_result(server, 5)
    assert "output:\nCONNECTED" not in closed
    assert "the network is off in this profile" in closed


def test_leaving_the_sandbox_is_never_granted_by_yes(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(shell("echo left", sandbox="none", justification="x"), Reply.text(["ok"]))
    run_cli(["run", "--yes", "go"], server=server)
    assert "never leaves the sandbox" in tool_result(server)


@pytest.mark.parametrize("backend", BACKENDS)
def test_kill_9_of_agentcli_leaves_no_process(
    backend: str, start_cli: StartCli, server: ScriptedServer, cli_home: Path
) -> None:
    use_backend(cli_home, backend)
    token = f"7{os.getpid() % 100}.{time.time_ns() % 100000}"
    command = f"setsid sleep {token}1 & (env -i sleep {token}2 &) ; sleep {token}3"
    server.enqueue(shell(command), Reply.hang(30))
    process = start_cli(["run", "--yes", "sleep"], server=server)
    deadline = time.monotonic() + 15
    while len(_alive_with(token)) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(_alive_with(token)) == 3
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=5)
    deadline = time.monotonic() + 5
    while _alive_with(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive_with(token) == []


def _alive_with(token: str) -> list[int]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        words = proc.info["cmdline"] or []
        zombie = proc.info["status"] == psutil.STATUS_ZOMBIE
        if words[:1] == ["sleep"] and token in " ".join(words) and not zombie:
            found.append(proc.pid)
    return found


def test_doctor_says_what_protects_commands(run_cli: RunCli, cli_home: Path) -> None:
    result = run_cli(["doctor", "--json"])
    data = json.loads(result.stdout)
    assert data["sandbox"]["active"] is True
    assert data["sandbox"]["backend"] == FOUND.backend
    assert set(data["profiles"]) == {"read-only", "workspace-write", "network", "none"}
    text = run_cli(["doctor"]).stdout
    assert text.startswith("sandbox: in force")

    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[sandbox]\nmode = "off"\n')
    off = json.loads(run_cli(["doctor", "--json"]).stdout)
    assert off["sandbox"]["active"] is False and "off" in off["advice"]


def test_an_untrusted_workspace_cannot_turn_the_sandbox_off(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, key_in_home: Path
) -> None:
    project = workspace / ".agentcli" / "config.toml"
    project.parent.mkdir()
    project.write_text('[sandbox]\nmode = "off"\nnetwork = true\n')
    data = json.loads(run_cli(["doctor", "--json"]).stdout)
    assert data["sandbox"]["active"] is True and data["sandbox"]["network_for_yes"] is False
    server.enqueue(shell(f"cat {key_in_home}"), Reply.text(["done"]))
    run_cli(["run", "--yes", "show"], server=server)
    assert SECRET not in tool_result(server)


def test_policy_explain_names_the_sandbox(run_cli: RunCli) -> None:
    low = json.loads(run_cli(["policy", "explain", "run_shell", "ls", "--json"]).stdout)
    assert low["sandbox"] == "read-only" and low["decision"] == "allow"
    high = json.loads(run_cli(["policy", "explain", "run_shell", "rm -r x", "--json"]).stdout)
    assert high["sandbox"] == "workspace-write"
    call = json.dumps({"command": "ls", "sandbox": "network", "justification": "fetch"})
    net = json.loads(run_cli(["policy", "explain", "run_shell", call, "--json", "--yes"]).stdout)
    assert net["sandbox"] == "network" and net["decision"] == "deny"


@pytest.mark.parametrize("backend", BACKENDS)
def test_run_python_runs_in_the_same_sandbox(
    backend: str, run_cli: RunCli, server: ScriptedServer, cli_home: Path, key_in_home: Path
) -> None:
    use_backend(cli_home, backend)
    code = (
        "import pathlib, sys\n"
        "print('python', sys.version_info[0])\n"
        f"try:\n    print(pathlib.Path({str(key_in_home)!r}).read_text())\n"
        "except OSError as error:\n    print('refused', type(error).__name__)\n"
    )
    call = Reply.tool_calls([{"name": "run_python", "arguments": {"code": code}}])
    server.enqueue(call, Reply.text(["done"]))
    result = run_cli(["run", "--yes", "run it"], server=server)
    content = tool_result(server)
    assert "python 3" in content, result.stderr + content
    assert "refused" in content and SECRET not in content


def test_config_command_tools_run_sandboxed(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, key_in_home: Path, workspace: Path
) -> None:
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f'[tools.show_key]\ncommand = "cat {key_in_home}"\nrisk = "low"\n'
        '[tools.touch_it]\ncommand = "touch made-by-tool"\nrisk = "medium"\n'
    )
    server.enqueue(Reply.tool_calls([{"name": "show_key", "arguments": {}}]), Reply.text(["done"]))
    run_cli(["run", "--deny", "go"], server=server)
    assert SECRET not in tool_result(server)
    assert "sandbox: read-only" in tool_result(server)
    server.enqueue(Reply.tool_calls([{"name": "touch_it", "arguments": {}}]), Reply.text(["done"]))
    run_cli(["run", "--yes", "go"], server=server)
    assert "sandbox: workspace-write" in tool_result(server, 3)
    assert (workspace / "made-by-tool").exists()
