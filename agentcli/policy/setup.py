"""Building a run's policy from the configuration, the flags and the terminal."""

from __future__ import annotations

import sys
from typing import Any

from agentcli.config import Config
from agentcli.config.edit import append_values
from agentcli.config.files import project_config_path
from agentcli.config.trust import is_trusted
from agentcli.policy.engine import Approver, Policy
from agentcli.policy.rules import Rule, RuleSet, parse_rule
from agentcli.workspace import Workspace


def rule_set(config: Config, allow: list[str], forbid: list[str]) -> RuleSet:
    def from_config(key: str) -> list[Rule]:
        return [parse_rule(text, source) for text, source in config.rules(key)]

    return RuleSet(
        allow=from_config("policy.allow") + [parse_rule(r, "--allow") for r in allow],
        ask=from_config("policy.ask"),
        deny=from_config("policy.deny") + [parse_rule(r, "--forbid") for r in forbid],
    )


def project_rule_writer(workspace: Workspace):  # type: ignore[no-untyped-def]
    """Saves "always in this project" choices as readable rules in the project's file."""

    def save(rules: list[str]) -> str:
        path = project_config_path(workspace.root)
        append_values(path, "policy.allow", rules)
        note = f"saved {', '.join(rules)} to {path}"
        if not is_trusted(workspace.root):
            note += " (it applies in later runs once you `agentcli trust` this workspace)"
        sys.stderr.write(f"agentcli: {note}\n")
        return note

    return save


def terminal_approver(screen: Any = None) -> Approver | None:
    """Someone can answer only when stdin is a terminal. `screen`: the front end's
    agentcli.ui.screen.TerminalGate, shared with its renderer."""
    if sys.stdin is None or not sys.stdin.isatty():
        return None
    from agentcli.ui.approval import TerminalApprover

    return TerminalApprover(screen=screen)


def build_policy(
    config: Config,
    workspace: Workspace,
    *,
    yes: bool,
    deny: bool,
    allow: list[str],
    forbid: list[str],
    interactive: bool,
    allow_network: bool = False,
) -> Policy:
    return Policy(
        rules=rule_set(config, allow, forbid),
        yes=yes,
        deny=deny,
        approver=terminal_approver() if interactive else None,
        workspace=workspace,
        save_project_rules=project_rule_writer(workspace),
        allow_network=allow_network,
    )
