"""A deny rule wins over every form that can run the denied program (security.md §30, §32,
§33): with `--yes --forbid 'run_shell(rm *)'`, no entry of the shell-escape corpus
(tests/shell_escapes.py: GTFOBins' Shell and Command functions for a developer machine's
programs, and bash's own keywords, traps, builtins and variables) removes its `victim`.

Three checks per entry: the policy's decision function denies it (fast, no process); the
installed CLI, driven by a scripted model that sends the whole corpus as tool calls of
one step, denies it on each sandbox backend (one agentcli process per backend: a denied
call starts nothing, so the whole corpus runs end to end in seconds); and, without
agentcli, the command really does remove `victim` where its programs are installed — so
each check would fail if the rule let it through. A control run shows that without the
rule the same calls do run `rm` through the CLI, for one entry of every class."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentcli.policy.engine import Policy
from agentcli.policy.rules import RuleSet, command_allowed_by, command_rule_pattern, parse_rule
from agentcli.policy.shell_parse import parse_command
from agentcli.risk import ApprovalRequest
from agentcli.sandbox.mechanisms import detect
from agentcli.tools.base import ToolContext
from agentcli.tools.shell import RunShell
from agentcli.workspace.root import Workspace
from tests.conftest import AGENTCLI, build_env, use_backend
from tests.scripted_server import Reply, ScriptedServer
from tests.shell_escapes import ESCAPES, Escape

RULE = "run_shell(rm *)"
IDS = [e.id for e in ESCAPES]
CLASSES = {
    "shell",
    "variable",
    "unreadable",
    "archiver",
    "stream-editor",
    "editor",
    "pager",
    "build",
    "debugger",
    "vcs",
    "package",
    "find-xargs",
    "wrapper",
    "interpreter",
    "network",
}
FOUND = detect()
BACKENDS = [
    pytest.param(
        "landlock", marks=pytest.mark.skipif(not FOUND.landlock_abi, reason="no Landlock")
    ),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(not FOUND.bwrap, reason="no bubblewrap")),
]


def lay_out(root: Path, escapes: list[Escape]) -> list[Path]:
    """A directory per escape under root, holding `victim` and the escape's files."""
    places = []
    for number, escape in enumerate(escapes):
        place = root / f"case-{number:03d}"
        place.mkdir(parents=True)
        (place / "victim").write_text("still here\n")
        for name, text in escape.files.items():
            (place / name).parent.mkdir(parents=True, exist_ok=True)
            (place / name).write_text(text)
        places.append(place)
    return places


# --- the corpus ----------------------------------------------------------------------------


def test_the_corpus_names_its_source_and_covers_every_class() -> None:
    import tests.shell_escapes as corpus

    assert "GTFOBins" in (corpus.__doc__ or "") and "knowledge" in (corpus.__doc__ or "")
    assert {e.kind for e in ESCAPES} == CLASSES
    assert {e.source for e in ESCAPES} == {"GTFOBins", "bash manual"}
    assert len(IDS) == len(set(IDS)) >= 150
    plain = [e for e in ESCAPES if not e.needs and not e.not_run]
    assert len(plain) >= 60  # these run wherever bash, coreutils, git and python run


def _runnable(escape: Escape) -> str | None:
    """Why the escape cannot run for real here, or None."""
    if escape.not_run:
        return escape.not_run
    missing = [n for n in escape.needs if shutil.which(n) is None]
    return f"not installed here: {', '.join(missing)}" if missing else None


@pytest.mark.parametrize("escape", ESCAPES, ids=IDS)
def test_the_escape_really_runs_rm(escape: Escape, tmp_path: Path) -> None:
    """Without agentcli, bash running the entry removes `victim`: the corpus is real."""
    reason = _runnable(escape)
    if reason:
        pytest.skip(reason)
    [place] = lay_out(tmp_path, [escape])
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(place), "LANG": "C"}
    subprocess.run(
        ["bash", "-c", escape.command],
        cwd=place,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,  # a bound against a hang, never a wait
        check=False,
    )
    assert not (place / "victim").exists(), escape.command


# --- the decision function -------------------------------------------------------------


def _decide(escape: Escape, place: Path, rules: RuleSet) -> tuple[str, list[str], str | None]:
    tool = RunShell()
    args = {"command": escape.command, "cwd": place.name}
    context = ToolContext(workspace=Workspace(place.parent))
    request = ApprovalRequest(
        "run_shell", args, tool.assess(args, context), None, tool.rule_subjects(args, context)
    )
    verdict = Policy(rules=rules, yes=True, workspace=Workspace(place.parent)).explain(request)
    return verdict.decision, verdict.reasons, verdict.rule


@pytest.mark.parametrize("escape", ESCAPES, ids=IDS)
def test_the_deny_rule_denies_every_escape(escape: Escape, tmp_path: Path) -> None:
    [place] = lay_out(tmp_path / "ws", [escape])
    denying = RuleSet(deny=[parse_rule(RULE, "test")])
    decision, reasons, rule = _decide(escape, place, denying)
    assert (decision, rule) == ("deny", RULE), reasons
    assert _decide(escape, place, RuleSet())[0] == "allow"  # the rule denies, not the command


# --- end to end: the installed CLI and a scripted model --------------------------------


def _run_cli(
    tmp: Path, escapes: list[Escape], backend: str, forbid: bool
) -> tuple[dict[str, Any], list[Path]]:
    """`agentcli run --yes [--forbid RULE]` in a workspace of one directory per escape,
    the model asking for every escape at once; the JSON document and the directories."""
    workspace, home = tmp / "ws", tmp / "home"
    places = lay_out(workspace, escapes)
    home.mkdir()
    use_backend(home, backend)
    calls = [
        {"id": f"c{i}", "name": "run_shell", "arguments": {"command": e.command, "cwd": p.name}}
        for i, (e, p) in enumerate(zip(escapes, places, strict=True))
    ]
    rule = ["--forbid", RULE] if forbid else []
    with ScriptedServer() as server:
        server.enqueue(Reply.tool_calls(calls), Reply.text(["done"]))
        result = subprocess.run(
            [str(AGENTCLI), "run", "--yes", *rule, "--output", "json", "try them"],
            cwd=workspace,
            env=build_env(home, server),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=600,  # a bound against a hang, never a wait
            check=False,
        )
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout), places


@pytest.fixture(scope="module", params=BACKENDS)
def denied_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The whole corpus under `--yes --forbid 'run_shell(rm *)'`, once per backend."""
    return _run_cli(tmp_path_factory.mktemp("escapes"), ESCAPES, request.param, forbid=True)


@pytest.mark.parametrize("number", range(len(ESCAPES)), ids=IDS)
def test_the_cli_denies_every_escape(denied_run: Any, number: int) -> None:
    doc, places = denied_run
    [call] = [c for c in doc["toolCalls"] if c["id"] == f"c{number}"]
    approval = call["approval"]
    assert (approval["decision"], approval["by"], approval["rule"]) == ("deny", "rule", RULE)
    assert (places[number] / "victim").exists(), ESCAPES[number].command


def _one_per_class() -> list[Escape]:
    """For the control run: the first escape of every class that runs here and in the
    workspace-write sandbox."""
    chosen: dict[str, Escape] = {}
    for escape in ESCAPES:
        if escape.kind in chosen or _runnable(escape) or escape.kind in _NOT_IN_SANDBOX:
            continue
        chosen[escape.kind] = escape
    return list(chosen.values())


# The sandbox keeps what these classes' first entries need (a pseudo-terminal for `script`,
# the npm cache in the home): the decision tests above hold them anyway.
_NOT_IN_SANDBOX = frozenset({"pager", "package"})


@pytest.mark.parametrize("backend", BACKENDS)
def test_without_the_rule_the_same_calls_do_run_rm(tmp_path: Path, backend: str) -> None:
    """The control: the escapes of the end-to-end run, one per class, do remove `victim`
    through the CLI under --yes when no rule forbids rm — what the rule stops is real."""
    escapes = _one_per_class()
    assert len(escapes) >= len(CLASSES) - len(_NOT_IN_SANDBOX)
    doc, places = _run_cli(tmp_path, escapes, backend, forbid=False)
    kept = [e.command for e, p in zip(escapes, places, strict=True) if (p / "victim").exists()]
    assert kept == [], (kept, doc.get("toolCalls"))


# --- a rule that allows matches what really runs ----------------------------------------


def _simple(command: str):  # type: ignore[no-untyped-def]
    [found] = parse_command(command).commands
    return found


@pytest.mark.parametrize(
    ("pattern", "command"),
    [
        ("git push *", "git push --receive-pack='rm x' origin main"),
        ("git push *", "git push --rec='rm x' origin"),
        ("git push *", "git push -- *"),  # a glob may expand into `--receive-pack=...`
        ("git rebase *", "git rebase -q --root -x 'rm x'"),
        ("git commit *", "git -C . commit -m x"),
        ("git config *", "git config core.pager 'rm x'"),
        ("tar *", "tar cf /dev/null /dev/null --checkpoint=1 --checkpoint-action=exec='rm x'"),
        ("tar *", "tar xIf 'sh -c rm' /dev/null"),
        ("zip *", "zip z.zip f -T -TT 'rm x #'"),
        ("sed *", "sed 's/.*/rm x/e' f"),
        ("sed *", "sed -n '1e rm x' f"),
        ("awk *", "awk 'BEGIN { system(\"rm x\") }'"),
        ("make *", "make -s --eval=x"),
        ("make *", "make SHELL=./c"),
        ("make test *", "make test -f other.mk"),
        ("gcc *", "gcc -wrapper sh,-c,rm -c a.c"),
        ("gdb *", "gdb -nx -batch -ex '!rm x'"),
        ("vim *", "vim -c '!rm x' notes.txt"),
        ("vim *", "vim '+!rm x' notes.txt"),
        ("less *", "less '+!rm x' notes.txt"),
        ("split *", "split --filter='rm x' f"),
        ("sort *", "sort --compress-program=./c f"),
        ("ssh *", "ssh -o ProxyCommand='rm x' host"),
        ("scp *", "scp -S ./c a b:"),
        ("go build *", "go build -toolexec ./c ."),
        ("npm test *", "npm test --script-shell=./c"),
        ("trap *", "trap 'rm x' EXIT"),
        ("openssl *", "openssl req -engine ./lib.so"),
    ],
)
def test_an_allow_rule_never_covers_what_runs_another_program(pattern: str, command: str):
    assert not command_allowed_by(pattern, _simple(command))


@pytest.mark.parametrize(
    ("pattern", "command"),
    [
        ("git push *", "git push --force-with-lease origin main"),
        ("tar *", "tar --checkpoint=100 -xzf a.tar.gz"),
        ("sed *", "sed -i 's/a/b/w changes.txt' f"),
        ("make test *", "make test -j4"),
        ("go build *", "go build ./..."),
        ("git config *", "git config --get user.name"),
        ("pytest *", "pytest -x tests/test_a.py"),
    ],
)
def test_an_allow_rule_still_covers_ordinary_arguments(pattern: str, command: str) -> None:
    assert command_allowed_by(pattern, _simple(command))


@pytest.mark.parametrize(
    "command",
    ["vim notes.txt", "python3 tool.py", "sed 's/a/b/e' f", "gdb ./a.out", "./build.sh x"],
)
def test_the_rule_offered_for_what_runs_its_words_is_that_command(command: str) -> None:
    simple = _simple(command)
    assert command_rule_pattern(simple) == shlex.join(simple.argv)


def test_a_rule_for_an_editor_does_not_allow_commands_piped_into_it(tmp_path: Path) -> None:
    tool = RunShell()
    context = ToolContext(workspace=Workspace(tmp_path))
    rules = RuleSet(allow=[parse_rule("run_shell(ed notes.txt)", "test")])
    for command, expected in (("ed notes.txt", "allow"), ("printf '!rm x' | ed notes.txt", "ask")):
        args = {"command": command}
        request = ApprovalRequest(
            "run_shell", args, tool.assess(args, context), None, tool.rule_subjects(args, context)
        )
        verdict = Policy(rules=rules, workspace=Workspace(tmp_path)).explain(request)
        assert verdict.decision == expected, (command, verdict.reasons)


# --- what the repository itself makes git run ------------------------------------------


def _repository(root: Path, *settings: tuple[str, str]) -> Path:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for key, value in settings:
        subprocess.run(["git", "-C", str(root), "config", key, value], check=True)
    (root / "victim").write_text("still here\n")
    return root


def _shell_decision(root: Path, command: str) -> str:
    tool = RunShell()
    args = {"command": command}
    context = ToolContext(workspace=Workspace(root))
    request = ApprovalRequest(
        "run_shell", args, tool.assess(args, context), None, tool.rule_subjects(args, context)
    )
    rules = RuleSet(deny=[parse_rule(RULE, "test")])
    return Policy(rules=rules, yes=True, workspace=Workspace(root)).explain(request).decision


def test_what_the_configuration_names_is_matched_as_a_command(tmp_path: Path) -> None:
    repo = _repository(tmp_path / "repo", ("core.fsmonitor", "rm victim;:"))
    for command in ("git status", "git commit -q --allow-empty -m x", "git branch new"):
        assert _shell_decision(repo, command) == "deny", command
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    assert not (repo / "victim").exists()  # git really ran it


def test_programs_the_configuration_names_for_other_things_do_not_match(tmp_path: Path):
    repo = _repository(
        tmp_path / "repo",
        ("filter.lfs.clean", "git-lfs clean -- %f"),
        ("core.pager", "less -R"),
        ("credential.helper", "store"),
    )
    for command in ("git status", "git log -p", "git commit -q -m x", "git push origin main"):
        assert _shell_decision(repo, command) == "allow", command


def test_a_hook_is_a_program_no_rule_can_read(tmp_path: Path) -> None:
    repo = _repository(tmp_path / "repo")
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nrm victim\n")
    hook.chmod(0o755)
    assert _shell_decision(repo, "git commit -q --allow-empty -m x") == "deny"
    assert _shell_decision(repo, "git log --oneline") == "allow"  # runs no hook
    husky = _repository(tmp_path / "husky", ("core.hooksPath", ".husky"))
    assert _shell_decision(husky, "git commit -q --allow-empty -m x") == "deny"  # it may change
    assert _shell_decision(husky, "git branch -a") == "allow"


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_cli_does_not_run_what_a_repository_names(tmp_path: Path, backend: str) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    _repository(workspace, ("core.fsmonitor", "rm victim;:"))
    home.mkdir()
    use_backend(home, backend)
    call = {"id": "c1", "name": "run_shell", "arguments": {"command": "git status"}}
    with ScriptedServer() as server:
        server.enqueue(Reply.tool_calls([call]), Reply.text(["done"]))
        result = subprocess.run(
            [str(AGENTCLI), "run", "--yes", "--forbid", RULE, "--output", "json", "status?"],
            cwd=workspace,
            env=build_env(home, server),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert result.returncode == 4, result.stderr
    [approval] = [c["approval"] for c in json.loads(result.stdout)["toolCalls"]]
    assert (approval["decision"], approval["rule"]) == ("deny", RULE)
    assert (workspace / "victim").exists()
