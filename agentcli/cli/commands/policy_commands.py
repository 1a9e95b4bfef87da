"""`agentcli policy explain` and `agentcli tools list`: what the policy would decide, and
which tools exist, without running anything."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from agentcli.agent.executor import Executor, InvalidCall
from agentcli.assembly import build_registry, provider_tools
from agentcli.config import load_config
from agentcli.conversation.messages import ToolCall
from agentcli.errors import ExitCode, UsageError
from agentcli.output.visible import one_line, visible_json
from agentcli.policy.engine import Policy
from agentcli.policy.setup import build_policy
from agentcli.risk import ApprovalRequest
from agentcli.tools.base import ToolContext
from agentcli.tools.plugin_source import plugin_sources
from agentcli.workspace.root import Workspace


def _arguments(tool: str, text: str | None) -> str:
    if tool == "run_shell":
        if text is None:
            raise UsageError("give the command to explain: agentcli policy explain run_shell 'CMD'")
        try:  # a whole call: {"command": ..., "sandbox": ..., "justification": ...}
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and "command" in parsed:
            return text
        return json.dumps({"command": text})
    return text or "{}"


class Explainer:
    """The policy, tools and flags of one workspace, built once, asked call after call."""

    def __init__(
        self,
        workspace: Path,
        *,
        yes: bool,
        deny: bool,
        allow: list[str],
        forbid: list[str],
        add_dir: list[str] = (),  # type: ignore[assignment]
    ) -> None:
        if yes and deny:
            raise UsageError("--yes and --deny contradict each other; pass one of them")
        config = load_config(workspace)
        ws = Workspace(workspace)
        self.policy = build_policy(config, ws, yes=yes, deny=deny, allow=allow, forbid=forbid)
        from agentcli.sandbox.confine import Sandbox, sandbox_settings

        sandbox = Sandbox(workspace, sandbox_settings(config, None, False, add_dir))
        self.policy.sandbox = sandbox
        boundary = sandbox.boundary(dict(os.environ))
        self.context = ToolContext(workspace=ws, sandbox=sandbox, boundary=boundary)
        self.executor = Executor(build_registry(config, None), Policy(), self.context, _drop)

    def explain(self, tool_name: str, arguments: str) -> dict[str, Any]:
        """The decision for one call (`arguments`: its JSON text); UsageError if it is bad."""
        call = ToolCall(id="explain", name=tool_name, arguments=arguments)
        try:
            prepared = self.executor.prepare(call)
        except InvalidCall as invalid:
            raise UsageError(str(invalid)) from None
        tool, args = prepared.tool, prepared.args
        assessment = tool.assess(args, self.context)
        subjects = tool.rule_subjects(args, self.context)
        profile = self.executor.sandbox_profile(tool, args, assessment)
        request = ApprovalRequest(
            tool.name, args, assessment, None, subjects, sandbox=profile, network=tool.network
        )
        verdict = self.policy.explain(request)
        return {
            "tool": tool.name,
            "risk": assessment.risk.label,
            "decision": verdict.decision,
            "by": verdict.by,
            "rule": verdict.rule,
            "reasons": verdict.reasons,
            "sandbox": profile,
        }


def _drop(event: object) -> None:
    pass


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
    add_dir: list[str],
) -> int:
    explainer = Explainer(
        workspace, yes=yes, deny=deny, allow=allow, forbid=forbid, add_dir=add_dir
    )
    result = explainer.explain(tool_name, _arguments(tool_name, args_text))
    if as_json:
        sys.stdout.write(visible_json(result) + "\n")
        return 0
    rule = f" (rule {one_line(result['rule'])})" if result["rule"] else ""
    where = f", sandbox {result['sandbox']}" if result["sandbox"] else ""
    sys.stdout.write(
        f"{result['decision']} — {result['tool']}, {result['risk']} risk{where}, decided by "
        f"{result['by']}{rule}\n"
    )
    for reason in result["reasons"]:
        sys.stdout.write(f"  · {one_line(reason)}\n")
    return 0


def explain_main(values: dict[str, Any]) -> int:
    """`agentcli policy explain` with its parsed values (agentcli.cli.options names them)."""
    from agentcli.cli.commands import workspace_dir
    from agentcli.errors import AgentCliError, print_error

    flags = {name: values[name] for name in ("yes", "deny")}
    rules = {name: values[name] or [] for name in ("allow", "forbid", "add_dir")}
    tool, args = values["tool"], values["args"]
    try:
        workspace = workspace_dir(values["cwd"])
        if values["stdin"]:
            if tool is not None:
                raise UsageError("--stdin reads the calls from stdin; give no TOOL with it")
            return explain_stream(workspace, sys.stdin, sys.stdout, **flags, **rules)
        if tool is None:
            raise UsageError("give the TOOL to explain (e.g. run_shell 'CMD'), or --stdin")
        return explain(workspace, tool, args, as_json=values["as_json"], **flags, **rules)
    except AgentCliError as error:
        print_error(str(error))
        return error.exit_code


def _stream_call(line: str) -> tuple[str, str]:
    """(tool, JSON arguments) of one input line: {"tool": T, "args": {...}} or
    {"command": "CMD"} (a run_shell call)."""
    try:
        item = json.loads(line)
    except ValueError as error:
        raise UsageError(f"not JSON: {error}") from None
    if not isinstance(item, dict):
        raise UsageError('expected an object: {"tool": ..., "args": {...}} or {"command": ...}')
    if "command" in item and "tool" not in item:
        if not isinstance(item["command"], str):
            raise UsageError('"command" must be a string')
        return "run_shell", json.dumps({"command": item["command"]})
    tool, args = item.get("tool"), item.get("args", {})
    if not isinstance(tool, str):
        raise UsageError('give "tool" (a string) and "args" (an object), or "command"')
    if not isinstance(args, dict):
        raise UsageError('"args" must be an object')
    return tool, json.dumps(args)


def explain_stream(
    workspace: Path,
    lines: Iterable[str],
    out: TextIO,
    *,
    yes: bool,
    deny: bool,
    allow: list[str],
    forbid: list[str],
    add_dir: list[str],
) -> int:
    """`policy explain --stdin`: one JSON decision per input line, in one process. A line
    that cannot be explained gets {"line": N, "error": ...} and the rest go on; the exit
    code is then 2 (usage), else 0. Blank lines are skipped."""
    explainer = Explainer(
        workspace, yes=yes, deny=deny, allow=allow, forbid=forbid, add_dir=add_dir
    )
    failed = False
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            result: dict[str, Any] = {"line": number, **explainer.explain(*_stream_call(line))}
        except UsageError as error:
            result, failed = {"line": number, "error": str(error)}, True
        except Exception as error:  # an input no check foresaw: this line fails, not the rest
            message = f"cannot explain this call: {type(error).__name__}: {error}"
            result, failed = {"line": number, "error": message}, True
        out.write(visible_json(result) + "\n")
        out.flush()  # a reader can act on each decision as it comes
    return ExitCode.USAGE if failed else ExitCode.OK


def list_tools(workspace: Path, as_json: bool) -> int:
    from agentcli.assembly.subagents import task_tool
    from agentcli.providers.configured import providers_of

    config = load_config(workspace)
    registry = build_registry(config, None)
    task = task_tool(config, workspace)  # naming the subagents this workspace has
    if task is not None:
        registry.add(task)
    for provider in providers_of(config).values():  # provider-defined tools, where enabled
        for tool in provider_tools(provider):
            if registry.get(tool.name) is None:
                registry.add(tool)
    for plugin in plugin_sources():
        plugin.load()
        for tool in plugin.tools():
            if registry.get(tool.name) is None:
                registry.add(tool)
    from agentcli.cli.commands.mcp_commands import tool_rows

    mcp_rows, absent = tool_rows(config, workspace)  # the servers are started to be asked
    rows = [
        {"name": t.name, "risk": t.risk_summary, "source": t.source, "description": t.description}
        for t in sorted(registry, key=lambda t: t.name)
    ] + sorted(mcp_rows, key=lambda row: (row["source"], row["name"]))
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return 0
    shown = [(one_line(r["name"]), one_line(r["source"]), r["risk"]) for r in rows]
    width = max(len(name) for name, _, _ in shown)
    source_width = max(len(source) for _, source, _ in shown)
    for name, source, risk in shown:
        sys.stdout.write(f"{name:<{width}}  {source:<{source_width}}  {risk}\n")
    for line in absent:  # a server that failed: its tools are absent, and why
        sys.stdout.write(f"{line}; its tools are absent\n")
    return 0
