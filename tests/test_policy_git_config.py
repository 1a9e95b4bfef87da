"""A repository's own `.git/config` can make read-only git commands run programs: such a
git command is not low risk. Real git repositories, real git processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from agentcli.policy.git_config import find_git_dir, program_key_in, repository_problem
from agentcli.policy.shell_risk import classify_shell
from agentcli.risk import Risk
from agentcli.workspace.root import Workspace
from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    git(path, "config", "user.email", "dev@example.com")
    git(path, "config", "user.name", "Dev")
    (path / "a.txt").write_text("one\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-qm", "first")
    return path


def test_the_hazard_is_real_and_such_git_commands_are_high(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    marker = tmp_path / "ran"
    assert classify_shell("git status", Workspace(repo)).risk is Risk.LOW

    git(repo, "config", "core.fsmonitor", f"touch {marker}")
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    assert marker.exists()  # plain `git status` ran the repository's program

    for command in ("git status", "git diff", "git ls-files", "git grep x", "git blame a.txt"):
        assessment = classify_shell(command, Workspace(repo))
        assert assessment.risk is Risk.HIGH, command
        assert "core.fsmonitor" in assessment.reason
    # commands that never look at the work tree never run it
    for command in ("git log -1", "git branch -a", "git show HEAD", "git rev-parse HEAD"):
        assert classify_shell(command, Workspace(repo)).risk is Risk.LOW, command
    # git's own fsmonitor daemon is not a program of the repository's
    git(repo, "config", "core.fsmonitor", "true")
    assert classify_shell("git status", Workspace(repo)).risk is Risk.LOW


def test_found_from_a_subdirectory_and_through_a_linked_worktree(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    (repo / "sub").mkdir()
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert find_git_dir(repo / "sub") == repo / ".git"
    assert classify_shell("git status", Workspace(tmp_path / "wt")).risk is Risk.LOW

    git(repo, "config", "diff.external", "evil-diff")
    assert "diff.external" in (repository_problem(repo / "sub") or "")
    worktree = classify_shell("git diff", Workspace(tmp_path / "wt"))
    assert worktree.risk is Risk.HIGH and "diff.external" in worktree.reason
    assert repository_problem(tmp_path) is None  # in no repository


def test_a_submodules_own_configuration_counts(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    module_config = repo / ".git" / "modules" / "lib" / "config"
    module_config.parent.mkdir(parents=True)
    module_config.write_text("[core]\n\tfsmonitor = ./run-me\n")
    assessment = classify_shell("git status", Workspace(repo))
    assert assessment.risk is Risk.HIGH and "core.fsmonitor" in assessment.reason


def test_a_bare_repository_is_its_own_git_dir(tmp_path: Path):
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    assert find_git_dir(bare) == bare
    git(bare, "config", "core.pager", "evil")
    assert "core.pager" in (repository_problem(bare) or "")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[diff "pdf"]\n\ttextconv = pdftotext\n', "diff.pdf.textconv"),
        ('[filter "lfs"]\n\tclean = git-lfs clean -- %f\n', "filter.lfs.clean"),
        ('[filter "x"]\n\tprocess = run-me\n', "filter.x.process"),
        # includes are followed where files are read (test_includes_are_followed)
        ("[include]\n\tpath = ../elsewhere.cfg\n", None),
        ('[includeIf "gitdir:~/"]\n\tpath = x.cfg\n', None),
        ('[CORE]\n  FSMonitor = "./watch.sh"\n', "core.fsmonitor"),
        # used only by commands that are never read-only: no reason to ask for git status
        ("[core] sshCommand = ssh -i key\n\thooksPath = .husky\n", None),
        ('[credential "https://example.com"]\n\thelper = store\n', None),
        ("[pager]\n\tlog = less\n", "pager.log"),
        ("[diff.old]\n\tcommand = x\n", "diff.old.command"),
        # gpg runs only when signatures are shown (log.showSignature, below)
        ('[gpg "ssh"]\n\tprogram = ./sign\n', None),
        ("[log]\n\tshowSignature = true\n", "log.showsignature"),
        ("[log]\n\tshowSignature\n", "log.showsignature"),
        ("[log]\n\tshowSignature = false\n", None),
        ("[log]\n\tshowSignature = 2\n", "log.showsignature"),  # nonzero integers are true
        ('[core]\n\tfsmonitor = "yes "\n', "core.fsmonitor"),  # no boolean: runs `yes`
        ("[core]\n\tfsmonitor = YES\n", None),
        # git's syntax: a byte order mark, quotes, escapes, continued lines, comments
        ("\ufeff[core]\n\tfsmonitor = ./evil\n", "core.fsmonitor"),
        ('[core]\n\tfsmonitor = "1;./evil"\n', "core.fsmonitor"),
        ('[core]\n\tfsmonitor = "true # not a comment"\n', "core.fsmonitor"),
        ('[core]\n\tfsmonitor = "true" # a comment\n', None),
        ("[core]\n\tfsmonitor = tr\\\nue\n", None),
        ("[core]\n\tfsmonitor = ./ev\\\nil\n", "core.fsmonitor"),
        ("[core]fsmonitor=./evil\n", "core.fsmonitor"),
        ('[diff "a\\"b"]\n\ttextconv = x\n', 'diff.a"b.textconv'),
        ("[core]\r\n\tfsmonitor = ./evil\r\n", "core.fsmonitor"),
        # empty values run nothing
        ("[diff]\n\texternal =\n[core]\n\tpager = \n", None),
        ('[credential]\n\thelper =\n[diff "x"]\n\ttextconv = ""\n', None),
        ("[core]\n\tbare = false\n\tfsmonitor\n\tfilemode = true\n", None),
        ("# [diff]\n; external = x\n[user]\n\tname = Dev\n", None),
        ('[remote "origin"]\n\turl = ../up.git\n\tfetch = +refs/heads/*\n', None),
    ],
)
def test_keys_that_name_a_program(text: str, key: str | None):
    assert program_key_in(text) == key


def test_agentcli_run_denies_git_in_a_repository_that_runs_programs(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    make_repo(workspace)
    marker = workspace.parent / "fsmonitor-ran"
    git(workspace, "config", "core.fsmonitor", f"touch {marker}")
    call = {"id": "c1", "name": "run_shell", "arguments": {"command": "git status"}}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["ok"]))

    result = run_cli(["run", "--output", "json", "status?"], server=server)

    assert result.returncode == 4, result.stderr  # nobody to ask: denied
    assert not marker.exists()
    [approval] = [c["approval"] for c in json.loads(result.stdout)["toolCalls"]]
    assert (approval["risk"], approval["decision"]) == ("high", "deny")
    assert "core.fsmonitor" in approval["reason"]


# --- which files git reads, and which keys matter to which subcommand -------------------


def risk(command: str, where: Path, workspace: Path | None = None) -> Risk:
    return classify_shell(command, Workspace(workspace or where), where).risk


def test_keys_matter_only_to_the_subcommands_that_use_them(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "filter.lfs.clean", "git-lfs clean -- %f")
    git(repo, "config", "filter.lfs.smudge", "git-lfs smudge -- %f")
    git(repo, "config", "diff.pdf.textconv", "pdftotext")
    git(repo, "config", "credential.helper", "store")
    git(repo, "config", "core.hooksPath", ".husky")
    assert risk("git status", repo) is Risk.HIGH  # runs the clean filter
    assert risk("git log -p", repo) is Risk.HIGH  # runs textconv
    for command in ("git log --oneline", "git branch -a", "git rev-parse HEAD", "git stash list"):
        assert risk(command, repo) is Risk.LOW, command


def test_signatures_shown_by_configuration_run_gpg(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "gpg.program", "./not-gpg")
    assert risk("git log -1", repo) is Risk.LOW  # no signature is shown
    git(repo, "config", "log.showSignature", "true")
    assert risk("git log -1", repo) is Risk.HIGH
    assert risk("git status", repo) is Risk.LOW


def test_quoted_fsmonitor_value_is_a_program_to_git(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    marker = tmp_path / "ran"
    config = repo / ".git" / "config"
    config.write_text(config.read_text() + f'[core]\n\tfsmonitor = "1;touch {marker}"\n')
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    assert marker.exists()  # git ran it: the quoted value is no boolean
    assert risk("git status", repo) is Risk.HIGH


def test_a_byte_order_mark_does_not_hide_the_section(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    marker = tmp_path / "ran"
    config = repo / ".git" / "config"
    config.write_text("\ufeff" + config.read_text() + f"[core]\n\tfsmonitor = touch {marker}\n")
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    assert marker.exists()
    assert risk("git status", repo) is Risk.HIGH


def test_includes_are_followed(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    (repo / "harmless.cfg").write_text("[user]\n\tname = Dev\n")
    git(repo, "config", "include.path", "../harmless.cfg")
    assert risk("git diff", repo) is Risk.LOW  # an include that names no program
    (repo / "nested.cfg").write_text('[diff "x"]\n\ttextconv = ./run-me\n')
    (repo / "harmless.cfg").write_text("[include]\n\tpath = nested.cfg\n")
    assert risk("git diff", repo) is Risk.HIGH
    assert risk("git branch", repo) is Risk.LOW


def test_worktree_configuration_counts(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "extensions.worktreeConfig", "true")
    git(repo, "config", "--worktree", "core.fsmonitor", "./watch")
    assert (repo / ".git" / "config.worktree").is_file()
    assert risk("git status", repo) is Risk.HIGH


def test_a_submodule_with_its_own_git_directory_counts(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    sub = make_repo(repo / "lib")
    (repo / ".gitmodules").write_text('[submodule "lib"]\n\tpath = lib\n\turl = ./lib\n')
    assert risk("git status", repo) is Risk.LOW
    git(sub, "config", "core.fsmonitor", "./watch")
    assert "lib" in classify_shell("git status", Workspace(repo)).reason


def test_hooks_run_by_read_only_commands(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    marker = tmp_path / "ran"
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    # Same content, another mtime: `git status` must refresh the entry's stat data and so
    # writes the index. (A changed content may leave the index as it was, by timing luck.)
    past = time.time() - 100
    os.utime(repo / "a.txt", (past, past))
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    assert marker.exists()  # `git status` wrote the index and ran the hook
    assert risk("git status", repo) is Risk.HIGH
    assert risk("git diff", repo) is Risk.HIGH
    assert risk("git log -1", repo) is Risk.LOW
    hook.unlink()
    git(repo, "config", "core.hooksPath", ".husky")
    (repo / ".husky").mkdir()
    (repo / ".husky" / "pre-commit").write_text("#!/bin/sh\n")
    assert risk("git status", repo) is Risk.LOW  # husky's hooks run on commit only
    husky_hook = repo / ".husky" / "post-index-change"
    husky_hook.write_text("#!/bin/sh\n")
    husky_hook.chmod(0o755)
    assert risk("git status", repo) is Risk.HIGH


def test_an_absorbed_submodules_hooks_path_is_its_work_trees(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    module = repo / ".git" / "modules" / "lib"
    module.mkdir(parents=True)
    (module / "config").write_text("[core]\n\tworktree = ../../../lib\n\thooksPath = .h\n")
    (repo / "lib" / ".h").mkdir(parents=True)
    assert risk("git status", repo) is Risk.LOW
    hook = repo / "lib" / ".h" / "post-index-change"
    hook.write_text("#!/bin/sh\n")
    hook.chmod(0o755)
    assert risk("git status", repo) is Risk.HIGH


def test_a_partial_clone_fetches_on_read(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "remote.origin.url", "https://example.invalid/x.git")
    git(repo, "config", "remote.origin.promisor", "true")
    git(repo, "config", "remote.origin.partialclonefilter", "blob:none")
    for command in ("git show HEAD", "git log -p", "git diff HEAD~1", "git blame a.txt"):
        assessment = classify_shell(command, Workspace(repo))
        assert assessment.risk is Risk.HIGH and "partial clone" in assessment.reason, command
    assert risk("git branch -a", repo) is Risk.LOW
    assert risk("git rev-parse HEAD", repo) is Risk.LOW


def test_files_the_configuration_names_outside_the_workspace(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    (repo / ".git-blame-ignore-revs").write_text("")
    git(repo, "config", "blame.ignoreRevsFile", ".git-blame-ignore-revs")
    assert risk("git blame a.txt", repo) is Risk.LOW
    git(repo, "config", "blame.ignoreRevsFile", "/etc/passwd")
    assert risk("git blame a.txt", repo) is Risk.HIGH
    assert risk("git log -1", repo) is Risk.LOW
    git(repo, "config", "core.worktree", "/")
    assert risk("git status", repo) is Risk.HIGH


def test_git_C_and_git_dir_read_the_repository_they_name(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    nested = make_repo(workspace / "downloaded")
    assert risk("git -C downloaded status", workspace) is Risk.LOW
    git(nested, "config", "core.fsmonitor", "./watch")
    assert risk("git status", workspace) is Risk.LOW  # no repository here
    assert risk("git -C downloaded status", workspace) is Risk.HIGH
    assert risk("git --git-dir=downloaded/.git status", workspace) is Risk.HIGH
    assert risk("git -C downloaded log -1", workspace) is Risk.LOW


def test_paths_after_git_C_are_relative_to_its_directory(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    workspace = repo / "ws"
    (workspace / "a" / "b").mkdir(parents=True)
    (repo / "secret.txt").write_text("outside the workspace, inside the repository\n")
    deep = workspace / "a" / "b"
    assert risk("git -C ../.. log -1", deep, workspace) is Risk.LOW
    # ../secret.txt is ws/a/secret.txt from the cwd, but repo/secret.txt for git
    assert risk("git -C ../.. diff HEAD -- ../secret.txt", deep, workspace) is Risk.HIGH
    assert risk("git -C ../../.. log -1", deep, workspace) is Risk.HIGH


def test_a_fifo_in_place_of_a_configuration_file_does_not_hang(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    os.mkfifo(repo / "waits.cfg")
    git(repo, "config", "include.path", "../waits.cfg")
    os.mkfifo(repo / ".gitmodules")
    started = time.monotonic()
    assert classify_shell("git log -1", Workspace(repo)).risk is Risk.LOW
    assert time.monotonic() - started < 5
