"""Protected paths are enforced while a command runs, not repaired by a race afterwards:
what git follows from `.git` (hooks, configuration, `commondir`, `gitdir`, alternates,
`info/`) and `.agentcli/` stay as they were, on both backends, whatever a command does —
overlapping another command, swapping `.git` for a link to elsewhere, planting a link in
`.git/hooks`, or killing whatever it can see and leaving an orphan to write later. Each
attack is also shown to work without the sandbox, so that every test can fail."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

import pytest

from agentcli.process.capture import OutputCapture
from agentcli.process.run import CommandResult, run_command
from agentcli.sandbox.confine import Sandbox, SandboxSettings
from agentcli.sandbox.guard import Guard
from agentcli.sandbox.mechanisms import detect
from agentcli.sandbox.profiles import Profile

FOUND = detect()
BACKENDS = [
    pytest.param(
        "landlock", marks=pytest.mark.skipif(not FOUND.landlock_abi, reason="no Landlock")
    ),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(not FOUND.bwrap, reason="no bubblewrap")),
]
HOOK = "#!/bin/sh\necho planted\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "README.md").write_text("hi\n")
    return ws


def git_state(ws: Path) -> dict[str, str]:
    """What a later `git` in the workspace follows, as text."""
    git = ws / ".git"
    state = {"config": (git / "config").read_text(), "is_dir": str(git.is_dir())}
    state["hooks"] = ",".join(sorted(p.name for p in (git / "hooks").iterdir()))
    for name in ("commondir", "gitdir", "objects/info/alternates", "info/attributes"):
        state[name] = (git / name).read_text() if (git / name).exists() else "-"
    return state


def run(sandbox: Sandbox | None, command: str, ws: Path, timeout: float = 20) -> CommandResult:
    env = {"PATH": os.environ["PATH"], "HOME": str(ws.parent / "home"), "LANG": "C.UTF-8"}
    argv = ["/bin/bash", "-c", command]

    async def go() -> CommandResult:
        confined = None
        if sandbox is not None:
            confined = sandbox.confine(argv, Profile.WORKSPACE_WRITE, cwd=str(ws), env=env)
        return await run_command(
            argv,
            cwd=str(ws),
            env=env,
            timeout=timeout,
            capture=OutputCapture(100_000),
            confined=confined,
        )

    return asyncio.run(go())


def sandbox_for(backend: str, ws: Path) -> Sandbox:
    return Sandbox(ws, SandboxSettings(backend=backend))


# Each: (what it does, an attack). The attack must change git_state without a sandbox.
ATTACKS = {
    "hook": "printf '#!/bin/sh\\necho x\\n' > .git/hooks/post-checkout; chmod +x .git/hooks/*",
    "config": "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config",
    "commondir": "echo /tmp > .git/commondir",
    "alternates": "mkdir -p .git/objects/info; echo /tmp/objects > .git/objects/info/alternates",
    "info": "echo '* filter=evil' > .git/info/attributes",
    "gitdir-file": "mv .git .git-moved && echo 'gitdir: /tmp/elsewhere' > .git",
    "git-symlink": "mv .git .git-moved && mkdir -p ../fake/hooks && "
    "printf '[core]\\n\\tfsmonitor = x\\n' > ../fake/config && ln -s ../fake .git",
    "hooks-symlink": "rm -rf .git/hooks && mkdir -p ../hooks-elsewhere && "
    'echo x > ../hooks-elsewhere/pre-commit && ln -s "$PWD/../hooks-elsewhere" .git/hooks',
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_each_attack_changes_what_git_follows_without_a_sandbox(repo: Path, attack: str) -> None:
    before = git_state(repo) if attack not in ("gitdir-file", "git-symlink") else None
    run(None, ATTACKS[attack], repo)
    if before is None:
        assert not (repo / ".git").is_dir() or (repo / ".git").is_symlink()
    else:
        assert git_state(repo) != before


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_no_command_changes_what_git_follows(backend: str, repo: Path, attack: str) -> None:
    before = git_state(repo)
    sandbox = sandbox_for(backend, repo)
    try:
        run(sandbox, ATTACKS[attack], repo)
    finally:
        sandbox.close()
    assert not (repo / ".git").is_symlink()
    assert git_state(repo) == before


@pytest.mark.parametrize("backend", BACKENDS)
def test_git_still_works_in_the_sandbox(backend: str, repo: Path) -> None:
    sandbox = sandbox_for(backend, repo)
    command = (
        "git add README.md && git -c user.name=t -c user.email=t@example.invalid "
        "commit -q -m one && git log --oneline | wc -l"
    )
    try:
        result = run(sandbox, command, repo)
    finally:
        sandbox.close()
    assert result.exit_code == 0, result.capture.text()
    assert result.capture.text().strip().endswith("1")


def test_the_repair_never_follows_a_planted_link(repo: Path, tmp_path: Path) -> None:
    """Landlock-only hosts repair; the repair must not act through what the command
    planted: a `.git` that became a link to elsewhere, a link in place of `.git/hooks`."""
    victim = tmp_path / "victim"
    (victim / "hooks").mkdir(parents=True)
    (victim / "config").write_text("the victim's own\n")
    (victim / "hooks" / "keep").write_text("keep me\n")
    guard = Guard(str(repo))
    before = git_state(repo)
    guard.begin()
    os.rename(repo / ".git", repo / ".git-moved")
    (repo / ".git").symlink_to(victim)
    assert ".git" in guard.end()
    assert (victim / "config").read_text() == "the victim's own\n"
    assert (victim / "hooks" / "keep").read_text() == "keep me\n"
    assert not (repo / ".git").is_symlink() and git_state(repo) == before

    guard.begin()
    subprocess.run(["rm", "-rf", str(repo / ".git" / "hooks")], check=True)
    (repo / ".git" / "hooks").symlink_to(victim / "hooks")
    guard.end()
    assert (victim / "hooks" / "keep").read_text() == "keep me\n"
    assert git_state(repo) == before
    guard.close()


def test_a_command_beside_another_cannot_poison_the_baseline(repo: Path) -> None:
    """A background job plants a hook while a foreground command starts: the baseline is
    what was there when no command ran, so the hook goes when either ends."""
    guard = Guard(str(repo))
    before = git_state(repo)
    guard.begin()  # the background job
    (repo / ".git" / "hooks" / "pre-commit").write_text(HOOK)
    guard.begin()  # the foreground command starts while the job runs
    guard.end()  # and ends
    assert git_state(repo) == before
    (repo / ".git" / "hooks" / "pre-commit").write_text(HOOK)
    guard.end()  # the job ends
    assert git_state(repo) == before
    guard.close()


def test_changes_made_between_commands_are_kept(repo: Path) -> None:
    """The baseline is taken again when no command runs: the user's own `git config`
    between two commands is theirs, not undone."""
    guard = Guard(str(repo))
    guard.begin()
    guard.end()
    subprocess.run(["git", "-C", str(repo), "config", "user.name", "Mine"], check=True)
    guard.begin()
    guard.end()
    assert "Mine" in (repo / ".git" / "config").read_text()
    guard.close()


def test_an_approved_write_is_not_undone(repo: Path) -> None:
    guard = Guard(str(repo))
    guard.begin()  # a background job runs all along
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(HOOK)  # agentcli wrote it: a person approved that one call
    guard.accept(str(hook))
    guard.end()
    assert hook.read_text() == HOOK
    guard.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_nothing_the_command_can_signal_keeps_its_processes(
    backend: str, repo: Path, tmp_path: Path
) -> None:
    """The command kills whatever it can see — its keeper above all — and leaves an orphan
    that writes a hook after the run: nothing of it outlives the run."""
    late = repo / "late-marker"  # where the command may write: only the orphan is stopped
    command = (
        "kill -KILL $PPID 2>/dev/null; kill -KILL -1 2>/dev/null; "
        f"setsid env -i /bin/sh -c 'sleep 1.5; touch {late}; echo x > .git/hooks/post-merge' "
        "& disown; sleep 0.3; exit 0"
    )
    sandbox = sandbox_for(backend, repo)
    try:
        run(sandbox, command, repo)
    finally:
        sandbox.close()
    time.sleep(2.5)
    assert not late.exists()
    assert not (repo / ".git" / "hooks" / "post-merge").exists()
