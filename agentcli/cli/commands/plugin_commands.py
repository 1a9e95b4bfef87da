"""`agentcli plugins`: the installed plug-ins, what they register, and what failed."""

from __future__ import annotations

import sys
from typing import Any

from agentcli.output.visible import one_line, visible_json
from agentcli.providers.table import provider_plugins
from agentcli.tools.plugin_source import plugin_sources


def list_plugins(as_json: bool) -> int:
    rows: list[dict[str, Any]] = []
    for source in plugin_sources():
        source.load()
        rows.append(
            {
                "name": source.entry.name,
                "group": "agentcli.tools",
                "package": source.origin,
                "state": source.state,
                "error": source.error,
                "tools": [{"name": t.name, "risk": t.risk_summary} for t in source.tools()],
            }
        )
    providers, problems = provider_plugins()
    for plugin in providers.values():
        rows.append(
            {
                "name": plugin.type,
                "group": "agentcli.providers",
                "package": plugin.origin,
                "state": "loaded",
                "error": None,
                "tools": [],
            }
        )
    if as_json:
        document = {"plugins": rows, "problems": problems}
        sys.stdout.write(visible_json(document, indent=2) + "\n")
        return 0
    if not rows and not problems:
        sys.stdout.write("no plug-ins installed (how to write one: docs/extending.md)\n")
    for row in rows:
        kind = "provider" if row["group"] == "agentcli.providers" else row["state"]
        sys.stdout.write(f"{one_line(row['name'])}  {kind}  {one_line(row['package'])}\n")
        if row["error"]:
            sys.stdout.write(f"  error: {one_line(row['error'])}\n")
        if row["tools"]:
            tools = ", ".join(f"{one_line(t['name'])} ({t['risk']})" for t in row["tools"])
            sys.stdout.write(f"  tools: {tools}\n")
    for problem in problems:
        sys.stdout.write(f"error: {one_line(problem)}\n")
    return 0
