"""Protected paths are enforced while a command runs, not repaired by a race afterwards:
what git follows from `.git` (hooks, configuration, `commondir`, `gitdir`, alternates,
`info/`) and `.agentcli/` stay as they were, on both backends, whatever a command does —
overlapping another command, swapping `.git` for a link to elsewhere, planting a link in
`.git/hooks`, or killing whatever it can see and leaving an orphan to write later — for the
workspace's repository and for the repositories below it (`sub/.git`, a `.git` file naming
a git directory elsewhere in the workspace). Where a bound stops the guard short, it says
so (a gap), so that agentcli fails closed. Each attack is also shown to work without the
sandbox, so that every test can fail."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

import pytest

from agentcli.process.capture import OutputCapture
from agentcli.process.run import CommandResult, run_command
from agentcli.sandbox import protected
from agentcli.sandbox.confine import Sandbox, SandboxSettings
from agentcli.sandbox.guard import OWN_ENTRIES, Guard
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


def run(
    sandbox: Sandbox | None,
    command: str,
    ws: Path,
    timeout: float = 20,
    profile: Profile = Profile.WORKSPACE_WRITE,
) -> CommandResult:
    env = {"PATH": os.environ["PATH"], "HOME": str(ws.parent / "home"), "LANG": "C.UTF-8"}
    argv = ["/bin/bash", "-c", command]

    async def go() -> CommandResult:
        confined = None
        if sandbox is not None:
            confined = sandbox.confine(argv, profile, cwd=str(ws), env=env)
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


def run_once(backend: str, command: str, ws: Path) -> CommandResult:
    """`command` in a session of its own on `backend`, workspace-write."""
    sandbox = sandbox_for(backend, ws)
    try:
        return run(sandbox, command, ws)
    finally:
        sandbox.close()


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
    run_once(backend, ATTACKS[attack], repo)
    assert not (repo / ".git").is_symlink()
    assert git_state(repo) == before


@pytest.mark.parametrize("backend", BACKENDS)
def test_git_still_works_in_the_sandbox(backend: str, repo: Path) -> None:
    command = (
        "git add README.md && git -c user.name=t -c user.email=t@example.invalid "
        "commit -q -m one && git log --oneline | wc -l"
    )
    result = run_once(backend, command, repo)
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


def test_a_change_made_between_the_check_and_the_start_is_kept(repo: Path) -> None:
    """The policy's check takes the baseline the command then starts with; what the user
    changed meanwhile (at the approval prompt, say) is theirs, not undone."""
    guard = Guard(str(repo))
    assert guard.gap() is None
    subprocess.run(["git", "-C", str(repo), "config", "user.name", "Mine"], check=True)
    (repo / ".git" / "hooks" / "pre-commit").write_text(HOOK)
    guard.begin()
    guard.end()
    assert "Mine" in (repo / ".git" / "config").read_text()
    assert (repo / ".git" / "hooks" / "pre-commit").read_text() == HOOK
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
    run_once(backend, command, repo)
    time.sleep(2.5)
    assert not late.exists()
    assert not (repo / ".git" / "hooks" / "post-merge").exists()


# --- repositories below the workspace


@pytest.fixture
def nested(repo: Path) -> Path:
    """`repo` holding `sub/` (a repository of its own), `deep/a/b/` (another), and `mod/`,
    whose `.git` is a file naming its git directory elsewhere in the workspace
    (`store/mod.git`), as `git init --separate-git-dir` and submodules make them."""
    for where in ("sub", "deep/a/b"):
        (repo / where).mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(repo / where)], check=True)
    (repo / "store").mkdir()
    subprocess.run(
        ["git", "init", "-q", "--separate-git-dir", str(repo / "store/mod.git"), str(repo / "mod")],
        check=True,
    )
    return repo


def nested_state(ws: Path) -> dict[str, str]:
    state = {}
    for where in ("sub", "deep/a/b"):
        for name, value in git_state(ws / where).items():
            state[f"{where}:{name}"] = value
        state[f"{where}:link"] = str((ws / where / ".git").is_symlink())
    mod_git = ws / "store" / "mod.git"
    state["mod/.git"] = (ws / "mod" / ".git").read_text()
    state["mod:config"] = (mod_git / "config").read_text()
    state["mod:hooks"] = ",".join(sorted(p.name for p in (mod_git / "hooks").iterdir()))
    return state


NESTED_ATTACKS = {
    "sub-hook": "printf '#!/bin/sh\\necho x\\n' > sub/.git/hooks/pre-commit",
    "sub-config": "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> sub/.git/config",
    "sub-commondir": "echo /tmp > sub/.git/commondir",
    "sub-gitdir-file": "mv sub/.git sub/.git-moved && echo 'gitdir: /tmp/elsewhere' > sub/.git",
    "sub-git-symlink": "mv sub/.git sub/.git-moved && ln -s ../.git sub/.git",
    "deep-hook": "echo x > deep/a/b/.git/hooks/post-checkout",
    "mod-repointed": "echo 'gitdir: ../sub/.git' > mod/.git",
    "mod-config": "printf '[core]\\n\\tfsmonitor = x\\n' >> store/mod.git/config",
    "mod-hook": "echo x > store/mod.git/hooks/post-merge",
}


@pytest.mark.parametrize("attack", sorted(NESTED_ATTACKS))
def test_each_nested_attack_changes_what_git_follows_without_a_sandbox(
    nested: Path, attack: str
) -> None:
    before = nested_state(nested)
    run(None, NESTED_ATTACKS[attack], nested)
    try:
        after = nested_state(nested)
    except (FileNotFoundError, NotADirectoryError):
        after = None
    assert after != before


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("attack", sorted(NESTED_ATTACKS))
def test_no_command_changes_what_git_follows_in_a_nested_repository(
    backend: str, nested: Path, attack: str
) -> None:
    before = nested_state(nested)
    run_once(backend, NESTED_ATTACKS[attack], nested)
    assert not (nested / "sub" / ".git").is_symlink()
    assert nested_state(nested) == before


def test_the_search_for_repositories_finds_them_breadth_first(nested: Path) -> None:
    fd = os.open(nested, os.O_RDONLY | os.O_DIRECTORY)
    try:
        found = protected.survey(fd, str(nested))
    finally:
        os.close(fd)
    assert found.repos == [".git", "store/mod.git", "sub/.git", "deep/a/b/.git"]
    assert "mod/.git" in found.git and "store/mod.git/hooks" in found.git
    assert found.gaps == []


def test_a_repository_made_between_commands_is_found_by_the_next_search(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search keeps what it listed, for directories unchanged since: a `.git` made in
    one of them (by the user, between two commands) changes its mtime, so it is found."""
    monkeypatch.setattr(protected, "SETTLED_NS", 0)  # the directories below are settled
    (repo / "d").mkdir()
    past = time.time() - 3600
    for directory in (repo, repo / "d"):
        os.utime(directory, (past, past))
    guard = Guard(str(repo))
    try:
        guard.begin()
        guard.end()
        subprocess.run(["git", "init", "-q", str(repo / "d")], check=True)
        guard.begin()
        (repo / "d" / ".git" / "hooks" / "post-checkout").write_text(HOOK)  # the command
        assert guard.end() == ["d/.git/hooks/post-checkout"]
    finally:
        guard.close()


def test_a_git_file_naming_a_place_outside_protects_only_the_file(
    repo: Path, tmp_path: Path
) -> None:
    """Outside the workspace no command can write; the file itself is still kept."""
    subprocess.run(
        ["git", "init", "-q", "--separate-git-dir", str(tmp_path / "far.git"), str(repo / "far")],
        check=True,
    )
    fd = os.open(repo, os.O_RDONLY | os.O_DIRECTORY)
    try:
        found = protected.survey(fd, str(repo))
    finally:
        os.close(fd)
    assert "far/.git" in found.git and found.repos == [".git"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_search_stopped_by_its_bound_fails_closed(
    backend: str, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the bound a repository may hide: the gap is said on both backends."""
    for index in range(12):
        (repo / f"d{index}").mkdir()
    sandbox = sandbox_for(backend, repo)
    try:
        assert sandbox.protection_gap(Profile.WORKSPACE_WRITE) is None
        monkeypatch.setattr(protected, "MAX_DIRS", 10)
        gap = sandbox.protection_gap(Profile.WORKSPACE_WRITE)
        assert gap is not None and "more than 10 directories" in gap.what
        assert sandbox.protection_gap(Profile.READ_ONLY) is None  # it writes nothing
    finally:
        sandbox.close()


def test_a_tree_too_large_to_keep_is_a_gap_on_landlock_only(repo: Path) -> None:
    own = repo / ".agentcli"
    own.mkdir()
    for index in range(OWN_ENTRIES + 1):
        (own / f"{index}").touch()
    copying, mounted = Guard(str(repo)), Guard(str(repo), mounts=True)
    try:
        gap = copying.gap()
        assert gap is not None and gap.what.startswith(".agentcli holds more than")
        assert mounted.gap() is None  # bubblewrap's mounts keep it read-only whole
        copying.begin()  # what it could not keep is never removed as new
        assert copying.end() == [] and len(list(own.iterdir())) == OWN_ENTRIES + 1
    finally:
        copying.close()
        mounted.close()


def test_a_file_too_large_to_keep_that_changes_is_removed(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person approved a command despite a gap: what cannot be put back is not left as
    the command wrote it."""
    from agentcli.sandbox import guard as guard_module

    monkeypatch.setattr(guard_module, "GIT_BYTES", 10)
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(HOOK)
    guard = Guard(str(repo))
    try:
        guard.begin()
        with hook.open("a") as handle:
            handle.write("touch pwned\n")
        assert ".git/hooks/pre-commit" in guard.end()
        assert not hook.exists()
    finally:
        guard.close()
