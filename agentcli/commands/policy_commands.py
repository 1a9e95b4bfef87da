"""`agentcli policy explain` and `agentcli tools list`: what the policy would decide, and
which tools exist, without running anything."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agentcli.config import load_config
from agentcli.errors import UsageError
from agentcli.executor import Executor, InvalidCall
from agentcli.messages import ToolCall
from agentcli.plugins import plugin_sources
from agentcli.policy import ApprovalRequest, Policy
from agentcli.policy.setup import build_policy
from agentcli.tools.base import ToolContext
from agentcli.tools.registry import build_registry, provider_tools
from agentcli.workspace import Workspace


def _arguments(tool: str, text: str | None) -> str:
    if tool == "run_shell":
        if text is None:
            raise UsageError("give the command to explain: agentcli policy explain run_shell 'CMD'")
        return json.dumps({"command": text})
    return text or "{}"


def explain(
    workspace: Path,
    tool_name: str,
    args_text: str | None,
    *,
    as_json: bool,
    yes: bool,
    deny: bool,
    allow: list[str],
    forbid: list[str],
) -> int:
    if yes and deny:
        raise UsageError("--yes and --deny contradict each other; pass one of them")
    config = load_config(workspace)
    registry = build_registry(config, None)
    ws = Workspace(workspace)
    policy = build_policy(config, ws, yes=yes, deny=deny, allow=allow, forbid=forbid,
                          interactive=False)  # fmt: skip
    context = ToolContext(workspace=ws)
    executor = Executor(registry, Policy(), context, lambda event: None)
    call = ToolCall(id="explain", name=tool_name, arguments=_arguments(tool_name, args_text))
    try:
        prepared = executor.prepare(call)
    except InvalidCall as invalid:
        raise UsageError(str(invalid)) from None
    tool, args = prepared.tool, prepared.args
    assessment = tool.assess(args, context)
    request = ApprovalRequest(tool.name, args, assessment, None, tool.rule_subjects(args, context))
    verdict = policy.explain(request)
    result = {
        "tool": tool.name,
        "risk": assessment.risk.label,
        "decision": verdict.decision,
        "by": verdict.by,
        "rule": verdict.rule,
        "reasons": verdict.reasons,
    }
    if as_json:
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
        return 0
    rule = f" (rule {verdict.rule})" if verdict.rule else ""
    sys.stdout.write(
        f"{verdict.decision} — {tool.name}, {assessment.risk.label} risk, decided by "
        f"{verdict.by}{rule}\n"
    )
    for reason in verdict.reasons:
        sys.stdout.write(f"  · {reason}\n")
    return 0


def list_tools(workspace: Path, as_json: bool) -> int:
    from agentcli.settings import providers_of

    config = load_config(workspace)
    registry = build_registry(config, None)
    for provider in providers_of(config).values():  # provider-defined tools, where enabled
        for tool in provider_tools(provider):
            if registry.get(tool.name) is None:
                registry.add(tool)
    for plugin in plugin_sources():  # (MCP servers' tools: `agentcli mcp list`)
        plugin.load()
        for tool in plugin.tools():
            if registry.get(tool.name) is None:
                registry.add(tool)
    rows = [
        {"name": t.name, "risk": t.risk_summary, "source": t.source, "description": t.description}
        for t in sorted(registry, key=lambda t: t.name)
    ]
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return 0
    width = max(len(r["name"]) for r in rows)
    source_width = max(len(r["source"]) for r in rows)
    for row in rows:
        sys.stdout.write(
            f"{row['name']:<{width}}  {row['source']:<{source_width}}  {row['risk']}\n"
        )
    return 0
