"""Building a run's policy from the configuration, the flags and the front end's approver
(the CLI or the REPL makes it: the policy knows no terminal)."""

from __future__ import annotations

import sys

from agentcli.config import Config
from agentcli.config.files import project_config_path
from agentcli.config.trust import is_trusted
from agentcli.policy.engine import Approver, Policy
from agentcli.policy.rules import Rule, RuleSet, parse_rule
from agentcli.workspace.root import Workspace


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
        from agentcli.config.edit import append_values  # its TOML modules: only to save a rule

        path = project_config_path(workspace.root)
        append_values(path, "policy.allow", rules)
        note = f"saved {', '.join(rules)} to {path}"
        if not is_trusted(workspace.root):
            note += " (it applies in later runs once you `agentcli trust` this workspace)"
        sys.stderr.write(f"agentcli: {note}\n")
        return note

    return save


def build_policy(
    config: Config,
    workspace: Workspace,
    *,
    yes: bool,
    deny: bool,
    allow: list[str],
    forbid: list[str],
    approver: Approver | None = None,
    allow_network: bool = False,
) -> Policy:
    return Policy(
        rules=rule_set(config, allow, forbid),
        yes=yes,
        deny=deny,
        approver=approver,  # None: nobody can answer, so what would ask is denied
        workspace=workspace,
        save_project_rules=project_rule_writer(workspace),
        allow_network=allow_network,
    )
