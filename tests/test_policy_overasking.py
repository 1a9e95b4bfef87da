"""Over-asking, measured on the peer corpus (tests/data/peer_commands.tsv): commands other
agent shells run without asking must mostly not ask here either, and the harmful ones must
never run without asking, with a sandbox or without. bench/overasking.py prints the detail."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.policy.shell_risk import classify_shell
from agentcli.risk import Risk
from agentcli.workspace.root import Workspace
from tests.peer_corpus import build_workspace, load_corpus

CASES = load_corpus()
SAFE = [c for c in CASES if c.verdict == "safe"]
HARMFUL = [c for c in CASES if c.verdict == "harmful"]
# Measured (bench/README.md): 17% without a sandbox (`ps` asks since issue 28: it shows
# agentcli's own command line), 2.7% contained by bubblewrap, 6% by Landlock alone (where
# `ps` asks too); 36% before issue 14.
MOST_ASKED = {False: 0.18, True: 0.03}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(build_workspace(tmp_path_factory.mktemp("peers")))


def test_the_corpus_is_large_and_labelled() -> None:
    assert len(SAFE) >= 300 and len(HARMFUL) >= 100
    assert {c.kind for c in HARMFUL} == {"write", "network", "outside", "exec"}


@pytest.mark.parametrize("contained", [False, True], ids=["no-sandbox", "contained"])
def test_few_harmless_commands_ask(workspace: Workspace, contained: bool) -> None:
    asked = [
        c.command
        for c in SAFE
        if classify_shell(
            c.command, workspace, contained=contained, processes_visible=lambda: not contained
        ).risk
        is not Risk.LOW
    ]  # contained: as under bubblewrap, whose commands see only their own processes
    assert len(asked) / len(SAFE) <= MOST_ASKED[contained], asked


@pytest.mark.parametrize("contained", [False, True], ids=["no-sandbox", "contained"])
@pytest.mark.parametrize("case", HARMFUL, ids=[f"{c.kind}:{c.command[:40]}" for c in HARMFUL])
def test_harmful_commands_never_run_without_asking(
    workspace: Workspace, case, contained: bool
) -> None:
    assessment = classify_shell(case.command, workspace, contained=contained)
    assert assessment.risk is not Risk.LOW, assessment.reason


def test_the_workspace_is_a_repository_that_mentions_helpers(workspace: Workspace) -> None:
    config = (Path(workspace.root) / ".git" / "config").read_text()
    assert "helper =" in config and "hooksPath" in config


def test_an_unrelated_deny_rule_refuses_no_harmless_command(workspace: Workspace) -> None:
    """A deny rule wins wherever a command may run any program; the peers' harmless
    commands run none (measured: 0 of 328 refused by `run_shell(rm *)`, before and after)."""
    from agentcli.policy.engine import Policy
    from agentcli.policy.rules import RuleSet, parse_rule
    from agentcli.risk import ApprovalRequest
    from agentcli.tools.base import ToolContext
    from agentcli.tools.shell import RunShell

    tool, context = RunShell(), ToolContext(workspace=workspace)
    policy = Policy(
        rules=RuleSet(deny=[parse_rule("run_shell(rm *)", "test")]), yes=True, workspace=workspace
    )
    refused = []
    for case in SAFE:
        args = {"command": case.command}
        subjects = tool.rule_subjects(args, context)
        request = ApprovalRequest("run_shell", args, tool.assess(args, context), None, subjects)
        if policy.explain(request).decision == "deny":
            refused.append(case.command)
    assert refused == []
