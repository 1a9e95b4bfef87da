"""The OS sandbox, for real on this kernel: each backend (Landlock alone; bubblewrap with
Landlock inside) confines a command to its profile. Every class of leak the classifier
alone let through — reading outside the workspace, reading agentcli's own environment,
writing where it should not, the network, processes that outlive agentcli — is tried
here against the sandbox, and the same command is shown to succeed without it, so each
test can fail."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.process.capture import OutputCapture
from agentcli.process.run import CommandResult, run_command
from agentcli.records import replace
from agentcli.sandbox.confine import Sandbox, SandboxSettings
from agentcli.sandbox.mechanisms import detect
from agentcli.sandbox.profiles import Profile

FOUND = detect()
BACKENDS = [
    pytest.param(
        "landlock",
        marks=pytest.mark.skipif(not FOUND.landlock_abi, reason="no Landlock on this kernel"),
    ),
    pytest.param(
        "bubblewrap",
        marks=pytest.mark.skipif(not FOUND.bwrap, reason=f"bubblewrap: {FOUND.bwrap_note}"),
    ),
]
SECRET = "s3cret-outside-the-workspace"


@pytest.fixture
def place(tmp_path: Path) -> dict[str, Path]:
    """A workspace with a git repository, a home directory with a key, a file beside them."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SECRET)
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("print('hi')\n")
    git = ["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    (tmp_path / "beside.txt").write_text(SECRET)
    return {"home": home, "ws": ws, "beside": tmp_path / "beside.txt"}


def run_in(
    backend: str | None,
    profile: Profile,
    command: str,
    place: dict[str, Path],
    timeout=20.0,
    path: str | None = None,
) -> CommandResult:
    settings = SandboxSettings(enabled=backend is not None, backend=backend or "auto")
    sandbox = Sandbox(place["ws"], settings)
    env = {"PATH": path or os.environ["PATH"], "HOME": str(place["home"]), "LANG": "C.UTF-8"}
    argv = ["/bin/bash", "-c", command]

    async def go() -> CommandResult:
        confined = sandbox.confine(argv, profile, cwd=str(place["ws"]), env=env)
        return await run_command(
            argv,
            cwd=str(place["ws"]),
            env=env,
            timeout=timeout,
            capture=OutputCapture(100_000),
            confined=confined,
        )

    try:
        return asyncio.run(go())
    finally:
        sandbox.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_reads_outside_the_workspace_are_refused(backend: str, place: dict[str, Path]) -> None:
    for target in (place["home"] / ".ssh" / "id_ed25519", place["beside"]):
        read = run_in(backend, Profile.READ_ONLY, f"cat {target}", place)
        assert SECRET not in read.capture.text() and read.exit_code != 0
        listing = run_in(backend, Profile.READ_ONLY, f"ls -a {target.parent}", place)
        assert target.name not in listing.capture.text()  # refused, or not there at all
        assert SECRET in run_in(None, Profile.NONE, f"cat {target}", place).capture.text()
        free = run_in(None, Profile.NONE, f"ls -a {target.parent}", place).capture.text()
        assert target.name in free


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_workspace_and_system_stay_readable(backend: str, place: dict[str, Path]) -> None:
    result = run_in(backend, Profile.READ_ONLY, "cat src/main.py && ls /usr/bin | wc -l", place)
    assert result.exit_code == 0, result.capture.text()
    assert "print('hi')" in result.capture.text()


@pytest.mark.parametrize("backend", BACKENDS)
def test_agentcli_environment_is_out_of_reach(backend: str, place: dict[str, Path]) -> None:
    """Even as root (CAP_SYS_PTRACE), a sandboxed command cannot read the environment of a
    process outside the sandbox — agentcli's, where the provider's key lives."""
    key = "sk-test-" + os.urandom(6).hex()
    holder = subprocess.Popen(["sleep", "60"], env={"OPENAI_API_KEY": key})
    try:
        command = (
            f"cat /proc/{holder.pid}/environ; grep -a -h -o 'sk-test-[0-9a-f]*' /proc/*/environ"
        )
        confined = run_in(backend, Profile.WORKSPACE_WRITE, command, place)
        assert key not in confined.capture.text()
        assert key in run_in(None, Profile.NONE, command, place).capture.text()
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("backend", BACKENDS)
def test_capabilities_are_dropped(backend: str, place: dict[str, Path]) -> None:
    result = run_in(backend, Profile.READ_ONLY, "grep CapEff /proc/self/status", place)
    assert "0000000000000000" in result.capture.text()


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_only_writes_nothing_but_its_temp_dir(backend: str, place: dict[str, Path]) -> None:
    command = 'echo x > made.txt; echo y > "$TMPDIR/scratch" && cat "$TMPDIR/scratch"'
    result = run_in(backend, Profile.READ_ONLY, command, place)
    assert not (place["ws"] / "made.txt").exists()
    assert "y" in result.capture.text()
    assert "sandbox: read-only" not in result.capture.text()  # notes come from format_result


@pytest.mark.parametrize("backend", BACKENDS)
def test_workspace_write_keeps_protected_paths(backend: str, place: dict[str, Path]) -> None:
    ws = place["ws"]
    command = (
        "echo ok > src/new.py; echo evil > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit;"
        " printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config;"
        f" echo outside > {place['home']}/planted; true"
    )
    result = run_in(backend, Profile.WORKSPACE_WRITE, command, place)
    assert (ws / "src" / "new.py").read_text() == "ok\n"
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert "fsmonitor" not in (ws / ".git" / "config").read_text()
    assert not (place["home"] / "planted").exists()
    assert result.exit_code == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_network_outside_the_network_profile(backend: str, place: dict[str, Path]) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    port = listener.getsockname()[1]
    command = (
        f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {port}),"
        " timeout=3); print('CONNECTED')\""
    )
    try:
        closed = run_in(backend, Profile.WORKSPACE_WRITE, command, place)
        assert "CONNECTED" not in closed.capture.text()
        assert "CONNECTED" in run_in(backend, Profile.NETWORK, command, place).capture.text()
    finally:
        listener.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_nothing_survives_a_timeout(backend: str, place: dict[str, Path]) -> None:
    """setsid, a double fork and env -i: none of them leaves the keeper's tree."""
    token = f"4{os.getpid() % 1000}.{abs(hash(backend)) % 1000}"
    command = (
        f"sleep {token}1 & setsid sleep {token}2 & (sleep {token}3 &) & env -i sleep {token}4 &"
        " sleep 30"
    )
    result = run_in(backend, Profile.READ_ONLY, command, place, timeout=1.5)
    assert result.timed_out
    assert _alive_with(token) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_leftovers_are_killed_when_the_command_ends(backend: str, place: dict[str, Path]) -> None:
    token = f"5{os.getpid() % 1000}.{abs(hash(backend)) % 1000}"
    result = run_in(backend, Profile.READ_ONLY, f"setsid sleep {token} & echo started", place)
    assert result.exit_code == 0 and "started" in result.capture.text()
    if backend == "landlock":  # the keeper counts them; under bubblewrap the namespace ends
        assert result.leftovers_killed >= 1
    assert _alive_with(token) == []


def _alive_with(token: str) -> list[int]:
    import time

    import psutil

    deadline = time.monotonic() + 3
    while True:
        alive = []
        for proc in psutil.process_iter(["pid", "cmdline", "status"]):
            cmdline = " ".join(proc.info["cmdline"] or [])
            zombie = proc.info["status"] == psutil.STATUS_ZOMBIE
            if token in cmdline and not zombie and "bash -c" not in cmdline:
                alive.append(proc.pid)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def test_seatbelt_profile_denies_by_default_and_keeps_protected_paths() -> None:
    from agentcli.sandbox.layout import Layout
    from agentcli.sandbox.seatbelt import seatbelt_profile

    layout = Layout(
        read=("/usr", "/w"),
        write=("/tmp/x", "/w"),
        devices=(),
        network=False,
        protected=("/w/.git/hooks", "/w/.git/config"),
        temp="/tmp/x",
        workspace="/w",
    )
    profile = seatbelt_profile(layout)
    assert profile.startswith("(version 1)\n(deny default)")
    assert '(subpath "/w")' in profile
    assert '(require-not (require-any (subpath "/w/.git/hooks") (subpath "/w/.git/config")))' in (
        profile
    )
    assert "network-outbound" not in profile
    assert "network-outbound" in seatbelt_profile(replace(layout, network=True))


def test_secret_files_in_etc_are_not_readable() -> None:
    from agentcli.sandbox.layout import etc_entries

    entries = etc_entries()
    assert "/etc/shadow" not in entries
    assert "/etc/passwd" in entries or not Path("/etc/passwd").exists()
    assert not any(e.startswith("/etc/ssh/") and e.endswith("_key") for e in entries)


def test_no_sandbox_means_the_command_runs_as_it_is(place: dict[str, Path]) -> None:
    sandbox = Sandbox(place["ws"], SandboxSettings(enabled=False))
    assert not sandbox.active
    confined = sandbox.confine(["true"], Profile.READ_ONLY, cwd=str(place["ws"]), env={})
    assert confined.argv == ["true"] and confined.profile is Profile.NONE


def test_bwrap_is_found_when_installed() -> None:
    if subprocess.run(["sh", "-c", "command -v bwrap"], capture_output=True).returncode:
        pytest.skip("bubblewrap is not installed")
    assert FOUND.bwrap_version


# Commands of each class a classifier has missed (security.md §14): the sandbox must make
# every one harmless in the profile a low-risk call runs in, whatever a classifier said.
# Each reads the key or plants a file; each does so without the sandbox.
LEAKS = {
    "option value attached to a short flag": "grep -f{key} -r . ; "
    "sort -o{beside_dir}/planted src/main.py",
    "bundled short flags": "grep -rhf {key} . ; sort -uo {beside_dir}/planted src/main.py",
    "GNU long-option abbreviation": "sort --outp={beside_dir}/planted src/main.py; "
    "grep --fil={key} -r .",
    "bash glob forms": "cat {home}/.ss[h]/*[[:alnum:]]* {home}/.ss[!x]/id*",
    "recursive flag following a symlink out": "ln -s {home} outlink 2>/dev/null; "
    "grep -rR '' outlink/ ; grep -R . {home}",
    "helper-running option": "git -c alias.x='!cat {key}; touch {beside_dir}/planted' x",
    "program-specific file read": "diff {key} /dev/null; tar cf - {home}/.ssh | cat",
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("leak", sorted(LEAKS))
def test_every_class_of_classifier_miss_is_harmless(
    backend: str, leak: str, place: dict[str, Path]
) -> None:
    key = place["home"] / ".ssh" / "id_ed25519"
    values = {"key": key, "home": place["home"], "beside_dir": place["beside"].parent}
    command = LEAKS[leak].format(**values)
    planted = place["beside"].parent / "planted"
    confined = run_in(backend, Profile.READ_ONLY, command, place)
    assert SECRET not in confined.capture.text() and not planted.exists(), leak
    if leak != "recursive flag following a symlink out":  # needs a write to set up freely
        free = run_in(None, Profile.NONE, command, place)
        assert SECRET in free.capture.text() or planted.exists(), f"{leak}: {free.capture.text()}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_git_works_and_reads_only_its_own_config_from_home(
    backend: str, place: dict[str, Path]
) -> None:
    (place["home"] / ".gitconfig").write_text("[user]\n\tname = Sandboxed Tester\n")
    command = "git status --short && git log --oneline -1 && git config user.name"
    result = run_in(backend, Profile.READ_ONLY, command, place)
    assert result.exit_code == 0, result.capture.text()
    assert "first" in result.capture.text() and "Sandboxed Tester" in result.capture.text()
    assert "warning" not in result.capture.text()


GITCONFIG = """[user]
\tname = Ada Lovelace
\temail = ada@example.invalid
[credential]
\thelper = store
[url "https://x-token:{secret}@example.invalid/"]
\tinsteadOf = https://example.invalid/
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_git_gets_the_users_identity_and_none_of_their_git_files(
    backend: str, place: dict[str, Path]
) -> None:
    """~/.config/git holds `credentials` beside `config`, and a global config names
    credential helpers and tokens: a command sees a generated identity instead."""
    home = place["home"]
    (home / ".gitconfig").write_text(GITCONFIG.format(secret=SECRET))
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "credentials").write_text(f"https://u:{SECRET}@example.invalid\n")
    command = (
        "git config --global --list; cat ~/.config/git/credentials ~/.gitconfig; "
        "git commit -q --allow-empty -m x && git log -1 --format='author=%an <%ae>'"
    )
    result = run_in(backend, Profile.WORKSPACE_WRITE, command, place)
    out = result.capture.text()
    assert SECRET not in out and "helper" not in out
    assert "user.name=Ada Lovelace" in out
    assert "author=Ada Lovelace <ada@example.invalid>" in out, out
    assert SECRET in run_in(None, Profile.NONE, command, place).capture.text()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_path_entry_that_is_the_home_exposes_nothing_of_it(
    backend: str, place: dict[str, Path]
) -> None:
    home = place["home"]
    path = f"{home}:{home / '.ssh'}:{os.environ['PATH']}"
    command = f"cat {home}/.ssh/id_ed25519 2>/dev/null; ls -a {home} 2>/dev/null"
    result = run_in(backend, Profile.READ_ONLY, command, place, path=path)
    assert SECRET not in result.capture.text() and ".ssh" not in result.capture.text()
    assert SECRET in run_in(None, Profile.NONE, command, place, path=path).capture.text()
