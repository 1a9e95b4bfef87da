"""Deny rules see through array subscripts, declarations, unmatched globs and NUL bytes
(tests/FAULTS.md, fourth fault pass, class "policy").

Bash evaluates an array subscript as arithmetic, and arithmetic expands `$(...)`: a
compound assignment `a=([k]=v)`, a declaration that parses `b=(...)` again, or a name
given to `read` / `printf -v` whose subscript is a variable holding `b[$(cmd)]` runs cmd.
Each such command line counts as running every program, so `--forbid 'run_shell(rm *)'`
denies it even under `--yes`; the plain forms that evaluate nothing stay as they were.
A glob outside the workspace that matches nothing is still a path outside, and a path
holding a NUL byte is refused in one line, never an internal error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.cli.commands.policy_commands import Explainer
from agentcli.errors import UsageError
from agentcli.policy.engine import Policy
from agentcli.policy.rules import RuleSet, parse_rule
from agentcli.policy.shell_risk import classify_shell
from agentcli.risk import ApprovalRequest, Risk
from agentcli.tools.base import ToolContext
from agentcli.tools.shell import RunShell
from agentcli.workspace.root import Workspace
from tests.conftest import RunCli, tool_results
from tests.scripted_server import Reply, ScriptedServer

RULE = "run_shell(rm *)"
DENYING = RuleSet(deny=[parse_rule(RULE, "test")])
_SUB = "b[$(rm canary)]"
# The fault pass's reproducers (each removed ./canary under --yes --forbid RULE), and the
# forms of the same class found while fixing them.
BYPASSES = [
    "a=(['$(rm canary)']=1)",
    "a+=(['$(rm canary)']=1)",
    "a=(['`rm canary`']=1)",
    f"x='{_SUB}'; a=([x]=1)",
    f"x='{_SUB}'; printf -v a[x] y",
    f"x='{_SUB}'; read a[x] <<< hi",
    "declare -a 'b=([$(rm canary)]=1)'",
    "declare -a b='($(rm canary))'",
    "typeset -a b='([$(rm canary)]=1)'",
    "declare -A b='([$(rm canary)]=1)'",
    f"x='{_SUB}'; a=([x]+=1)",
    f"x='{_SUB}'; a=([0]=1 [x]=2)",
    f"x='{_SUB}'; declare -a b=([x]=1)",
    f"x='{_SUB}'; local -a b=([x]=1)",
    "x='($(rm canary))'; declare -a b=$x",
    f"x='{_SUB}'; command printf -v a[x] y",
    "builtin declare -a b='($(rm canary))'",
]
# Forms that evaluate nothing: no deny rule for `rm` matches them, as before the fix.
SAFE = [
    "a=(1 2 3)",
    "a[0]=x",
    "a=([0]=x [1]=y)",
    "a+=([2]=z)",
    "declare -a a",
    "declare x=1",
    "local a=(1 2)",
    "export foo=bar",
    "read line",
    "read -r line",
    'read -p "$p" line',
    "printf -v out '%s' x",
]


def _decide(
    command: str, workspace: Path, rules: RuleSet, yes: bool
) -> tuple[Risk, str, list[str]]:
    tool, args = RunShell(), {"command": command}
    context = ToolContext(workspace=Workspace(workspace))
    assessment = tool.assess(args, context)
    request = ApprovalRequest(
        "run_shell", args, assessment, None, tool.rule_subjects(args, context)
    )
    verdict = Policy(rules=rules, yes=yes, workspace=Workspace(workspace)).explain(request)
    return assessment.risk, verdict.decision, verdict.reasons


@pytest.mark.parametrize("command", BYPASSES)
def test_a_subscript_or_declaration_that_can_run_a_program_is_denied(
    command: str, tmp_path: Path
) -> None:
    _, decision, reasons = _decide(command, tmp_path, DENYING, yes=True)
    assert decision == "deny", reasons
    assert any("it may run any program" in r for r in reasons), reasons
    risk, _, reasons = _decide(command, tmp_path, RuleSet(), yes=False)
    assert risk is not Risk.LOW, reasons


@pytest.mark.parametrize("command", SAFE)
def test_a_plain_assignment_read_or_printf_is_not_matched_by_the_rule(
    command: str, tmp_path: Path
) -> None:
    _, decision, reasons = _decide(command, tmp_path, DENYING, yes=True)
    assert decision == "allow", reasons


# --- a glob outside the workspace that matches nothing -----------------------------------


@pytest.mark.parametrize("command", ["cat /nonexist-agentcli/*", "cat ~/*", "ls ~/*.nothing"])
def test_an_outside_glob_that_matches_nothing_is_a_path_outside(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()  # empty: `~/*` matches nothing
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assessment = classify_shell(command, Workspace(tmp_path / "ws"))
    assert assessment.risk is Risk.HIGH
    assert "outside the workspace" in assessment.reason


def test_a_glob_inside_that_matches_nothing_stays_low(tmp_path: Path) -> None:
    assessment = classify_shell("cat *.nothing", Workspace(tmp_path))
    assert (assessment.risk, assessment.reason) == (Risk.LOW, "read-only (cat)")


def test_policy_explain_asks_for_an_outside_glob_that_matches_nothing(run_cli: RunCli) -> None:
    result = run_cli(["policy", "explain", "--json", "run_shell", "cat /nonexist-agentcli/*"])
    assert result.returncode == 0, result.stderr
    decided = json.loads(result.stdout)
    assert (decided["risk"], decided["decision"]) == ("high", "ask")
    assert decided["reasons"] == ["`cat` would read /nonexist-agentcli/*, outside the workspace"]


# --- a NUL byte in a path ----------------------------------------------------------------

PATH_CALLS = [
    ("read_file", {"path": "a\x00b"}, "path"),
    ("write_file", {"path": "a\x00b", "content": "x"}, "path"),
    ("edit_file", {"path": "a\x00b", "old_text": "x", "new_text": "y"}, "path"),
    ("list_directory", {"path": "a\x00b"}, "path"),
    ("create_directory", {"path": "a\x00b"}, "path"),
    ("search_files", {"pattern": "*", "path": "a\x00b"}, "path"),
    ("search_content", {"pattern": "x", "path": "a\x00b"}, "path"),
    ("run_shell", {"command": "ls", "cwd": "a\x00b"}, "cwd"),
]


@pytest.mark.parametrize(("tool", "args", "name"), PATH_CALLS, ids=[c[0] for c in PATH_CALLS])
def test_a_path_with_a_nul_byte_is_refused_in_one_line(
    tool: str, args: dict[str, str], name: str, tmp_path: Path
) -> None:
    explainer = Explainer(tmp_path, yes=False, deny=False, allow=[], forbid=[])
    with pytest.raises(UsageError) as refused:
        explainer.explain(tool, json.dumps(args))
    assert str(refused.value) == f"the {name} contains a NUL byte"


def test_policy_explain_says_a_path_holds_a_nul_byte(run_cli: RunCli) -> None:
    call = json.dumps({"path": "a\x00b"})
    result = run_cli(["policy", "explain", "read_file", call])
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "agentcli: error: the path contains a NUL byte\n"
    line = json.dumps({"tool": "read_file", "args": {"path": "a\x00b"}})
    result = run_cli(["policy", "explain", "--stdin"], input=line + "\n")
    assert result.returncode == 2, result.stderr
    assert json.loads(result.stdout) == {"line": 1, "error": "the path contains a NUL byte"}


def test_a_run_refuses_the_models_calls_with_a_nul_byte(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    calls = [
        {"id": f"c{i}", "name": tool, "arguments": args}
        for i, (tool, args, _) in enumerate(PATH_CALLS)
    ]
    calls.append({"id": "pattern", "name": "search_content", "arguments": {"pattern": "a\x00b"}})
    server.enqueue(Reply.tool_calls(calls), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "go"], server=server, timeout=60)
    assert "internal error" not in result.stderr and "ValueError" not in result.stderr
    results = tool_results(server)
    for i, (_, _, name) in enumerate(PATH_CALLS):
        assert results[f"c{i}"] == f"Error: the {name} contains a NUL byte"
    assert "ValueError" not in results["pattern"] and "NUL byte" in results["pattern"]


# --- end to end: the installed CLI under --yes --forbid ------------------------------------


@pytest.mark.parametrize("command", BYPASSES[:4] + BYPASSES[5:8])
def test_the_cli_denies_the_bypass_and_the_canary_stays(
    command: str, run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    (workspace / "canary").write_text("keep\n")
    call = {"id": "c0", "name": "run_shell", "arguments": {"command": command}}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "--forbid", RULE, "go"], server=server, timeout=60)
    assert result.returncode == 4, result.stderr  # a denial: the documented exit code
    assert (workspace / "canary").read_text() == "keep\n"
    assert f"run_shell denied: the rule {RULE} denies it; it may run any program" in result.stderr
