"""`agentcli config show | path | set` and `agentcli trust`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from agentcli.config import load_config, trust
from agentcli.config.edit import set_value
from agentcli.config.files import project_config_path, user_config_path
from agentcli.output.visible import one_line, visible_json


def _shown(value: Any) -> str:
    """A value as one line: a project's config file is text from outside."""
    if value is None:
        return "(none)"
    return one_line(visible_json(value) if not isinstance(value, str) else value)


def effective_model(config: Any) -> tuple[str | None, str]:
    """The model a run here would use (aliases and bare provider names spelt out) and where
    it came from; when there is none, why not."""
    from agentcli.assembly import model_choice
    from agentcli.errors import AgentCliError
    from agentcli.providers.configured import parse_model, providers_of

    try:
        written, source = model_choice(config, os.environ)
    except AgentCliError:
        return None, "none: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or pass --base-url URL"
    try:
        return str(parse_model(written, providers_of(config))), source
    except AgentCliError:  # the run will say what is wrong with it
        return written, source


def show(workspace: Path, as_json: bool) -> int:
    config = load_config(workspace)
    model = ("model", *effective_model(config))
    rows = sorted([model, *(row for row in config.effective() if row[0] != "model")])
    if as_json:
        document = {
            "settings": [{"key": k, "value": v, "source": s} for k, v, s in rows],
            "trusted": config.trusted,
            "ignored": config.ignored,
            "warnings": config.warnings,
        }
        sys.stdout.write(visible_json(document, indent=2) + "\n")
        return 0
    rows = [(one_line(key), _shown(value), one_line(source)) for key, value, source in rows]
    width = max(len(k) for k, _, _ in rows)
    for key, value, source in rows:
        sys.stdout.write(f"{key:<{width}}  {value:<28}  # {source}\n")
    for line in config.warnings:
        sys.stderr.write(f"agentcli: warning: {one_line(line)}\n")
    if config.ignored:
        sys.stderr.write(
            f"agentcli: this workspace is not trusted; ignored from "
            f"{one_line(project_config_path(workspace))}: {one_line(', '.join(config.ignored))}\n"
        )
    return 0


def paths(workspace: Path) -> int:
    for label, path in (("user", user_config_path()), ("project", project_config_path(workspace))):
        state = "exists" if path.exists() else "not created yet"
        sys.stdout.write(f"{label:<8} {one_line(path)}  ({state})\n")
    return 0


def set_key(workspace: Path, key: str, value: str, project: bool) -> int:
    path = project_config_path(workspace) if project else user_config_path()
    stored = set_value(path, key, value)
    sys.stdout.write(f"{one_line(key)} = {_shown(stored)}  # written to {one_line(path)}\n")
    return 0


def trust_workspace(workspace: Path, revoke: bool, listing: bool) -> int:
    if listing:
        trusted = trust.trusted_workspaces()
        if not trusted:
            sys.stdout.write("no workspace is trusted yet; `agentcli trust PATH` trusts one\n")
        for path in trusted:
            sys.stdout.write(one_line(path) + "\n")
        return 0
    trust.set_trusted(workspace, not revoke)
    verb = (
        "no longer trusted" if revoke else "trusted: its .agentcli/config.toml now applies in full"
    )
    sys.stdout.write(f"{one_line(workspace)}: {verb}\n")
    return 0
