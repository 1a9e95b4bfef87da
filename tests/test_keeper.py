"""The keeper (agentcli/sandbox/launcher.py) on Landlock alone, at this kernel's ABI and at
the ABIs below the features it relies on. This host has a newer Landlock, so the lower ABIs
are forced the way agentcli itself would meet them: the ABI agentcli believes it has is
lowered (a Mechanisms with `landlock_abi` lowered here; AGENTCLI_LANDLOCK_ABI from outside),
and the keeper then builds its ruleset for that ABI alone — below 6, without signal scoping
— as on an older kernel. What stands in for the missing features is a seccomp filter, and
each attack below gets through without it (checked by taking the filter out).

Only harmless forms are tried where a leak would reach beyond the test: signal 0 (a
permission check that sends nothing) for `kill -1` and for agentcli itself."""

from __future__ import annotations

import json
import os
import resource
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from agentcli.process.run import CommandResult
from agentcli.records import replace
from agentcli.sandbox.confine import Sandbox, SandboxSettings
from agentcli.sandbox.mechanisms import detect
from agentcli.sandbox.profiles import Profile
from tests.conftest import RunCli, use_backend
from tests.scripted_server import Reply, ScriptedServer
from tests.test_protected_paths import repo, run

__all__ = ["repo"]  # the fixture, a git repository with a README.md
FOUND = detect()
pytestmark = pytest.mark.skipif(not FOUND.landlock_abi, reason="no Landlock")
ABIS = sorted({5, FOUND.landlock_abi})


@pytest.fixture
def own_limit() -> Iterator[tuple[int, int]]:
    """This process is the command's agentcli: its file limit, put back whatever happens."""
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)
    yield limit
    resource.setrlimit(resource.RLIMIT_NOFILE, limit)


def run_at(
    abi: int, command: str, ws: Path, profile: Profile = Profile.WORKSPACE_WRITE
) -> CommandResult:
    """`command` under Landlock alone, as on a kernel whose Landlock ABI is `abi`."""
    mechanisms = replace(FOUND, landlock_abi=min(abi, FOUND.landlock_abi), bwrap=None)
    sandbox = Sandbox(ws, SandboxSettings(backend="landlock"), mechanisms)
    try:
        return run(sandbox, command, ws, timeout=30, profile=profile)
    finally:
        sandbox.close()


def alive_with(token: str) -> list[int]:
    """Processes left with `token` in their command line. Asked once the run has ended: the
    keeper kills and reaps the whole tree before it reports, so any left got away."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        words = " ".join(proc.info["cmdline"] or [])
        if token in words and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc.pid)
    return found


# What the command tries against its keeper ($PPID) to leave a process behind it.
AT_THE_KEEPER = {
    "kill": "kill -KILL $PPID",
    "stop": "kill -STOP $PPID",
    "its group": "kill -KILL -$PPID",
    "kill 0": "kill -KILL 0",
    "no descriptors": "prlimit --pid $PPID --nofile=0:0",
    "no processes": "prlimit --pid $PPID --nproc=0:0 --cpu=0:0",
}


@pytest.mark.parametrize("abi", ABIS)
@pytest.mark.parametrize("attack", sorted(AT_THE_KEEPER))
def test_nothing_the_command_does_to_its_keeper_leaves_a_process_behind(
    abi: int, attack: str, repo: Path
) -> None:
    token = f"9{os.getpid() % 1000}.{abs(hash(attack)) % 10000}{abi}"
    command = (
        f"setsid env -i sleep {token} & disown; {AT_THE_KEEPER[attack]}; "
        "echo x > .git/hooks/post-merge; exit 0"
    )
    result = run_at(abi, command, repo)
    assert not result.timed_out  # the keeper ended it, not agentcli's time limit
    assert alive_with(token) == []
    assert not (repo / ".git" / "hooks" / "post-merge").exists()


@pytest.mark.parametrize("abi", ABIS)
def test_agentcli_and_every_process_are_out_of_the_commands_reach(
    abi: int, repo: Path, own_limit: tuple[int, int]
) -> None:
    """Signal 0 asks the kernel whether a signal would be allowed and sends nothing."""
    me = os.getpid()
    command = (
        f"kill -0 -1; echo every=$?; kill -0 {me}; echo agentcli=$?; "
        f"prlimit --pid {me} --nofile=64:64; echo limit=$?; "
        "echo x > .git/hooks/post-merge; exit 0"
    )
    output = run_at(abi, command, repo).capture.text()
    assert "every=1" in output and "agentcli=1" in output, output
    assert "limit=1" in output and resource.getrlimit(resource.RLIMIT_NOFILE) == own_limit
    assert not (repo / ".git" / "hooks" / "post-merge").exists()


@pytest.mark.parametrize("abi", ABIS)
def test_the_command_still_signals_and_limits_its_own(abi: int, repo: Path) -> None:
    command = (
        "sleep 30 & kill -TERM $! && wait $!; echo child=$?; "
        "prlimit --nofile=50:50 sh -c 'ulimit -n'; trap 'echo trapped' USR1; kill -USR1 $$"
    )
    output = run_at(abi, command, repo).capture.text()
    assert "child=143" in output and "50" in output and "trapped" in output, output


@pytest.mark.parametrize("abi", sorted({2, FOUND.landlock_abi}))
def test_a_read_only_command_cannot_truncate_what_it_reads(abi: int, repo: Path) -> None:
    """Below ABI 3 truncate(2) by path is not Landlock's to refuse (and root may write the
    file): the filter refuses it there."""
    command = "python3 -c \"import os; os.truncate('README.md', 0)\"; echo done=$?"
    output = run_at(abi, command, repo, Profile.READ_ONLY).capture.text()
    assert "done=1" in output, output
    assert (repo / "README.md").read_text() == "hi\n"


# --- from outside: the installed CLI with its ABI lowered


def test_doctor_says_what_is_weaker_below_abi_6(run_cli: RunCli, cli_home: Path) -> None:
    use_backend(cli_home, "landlock")
    lowered = json.loads(run_cli(["doctor", "--json"], env={"AGENTCLI_LANDLOCK_ABI": "5"}).stdout)[
        "sandbox"
    ]
    assert lowered["landlock"]["abi"] == 5
    assert f"lowered from {FOUND.landlock_abi}" in lowered["landlock"]["note"]
    [weaker] = lowered["weaker"]
    assert "signals and abstract Unix sockets are not scoped" in weaker
    text = run_cli(["doctor"], env={"AGENTCLI_LANDLOCK_ABI": "2"}).stdout
    assert "weaker here (Landlock ABI 2):" in text and "truncat" in text
    if FOUND.landlock_abi >= 6:
        newest = json.loads(run_cli(["doctor", "--json"]).stdout)["sandbox"]
        assert newest["weaker"] == []
    ignored = run_cli(["doctor", "--json"], env={"AGENTCLI_LANDLOCK_ABI": "99"}).stdout
    assert "ignored" in json.loads(ignored)["sandbox"]["landlock"]["note"]


def test_below_abi_6_a_command_under_yes_cannot_free_itself(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    """The keeper killed, agentcli left without file descriptors: either would let an
    orphan live on or a planted hook stay."""
    use_backend(cli_home, "landlock")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    token = f"8{os.getpid() % 1000}.{os.urandom(2).hex()}"
    agentcli = "$(awk '/^PPid/{print $2}' /proc/$PPID/status)"
    command = (
        f"setsid env -i sleep {token} & disown; prlimit --pid {agentcli} --nofile=3:3; "
        "kill -KILL $PPID; echo x > .git/hooks/post-merge; exit 0"
    )
    call = {"name": "run_shell", "arguments": {"command": command}}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["done"]))
    result = run_cli(
        ["run", "--yes", "free yourself"], server=server, env={"AGENTCLI_LANDLOCK_ABI": "5"}
    )
    assert result.returncode == 0, result.stderr
    assert alive_with(token) == []
    assert not (workspace / ".git" / "hooks" / "post-merge").exists()
