"""system_info: what the machine is, without running anything."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from agentcli.risk import Assessment, Risk
from agentcli.tools.base import Tool, ToolContext, ToolOutput


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform  # (imported when the tool runs: its regexes cost every startup)

    return platform.processor() or platform.machine() or "unknown"


def _gib(count: float) -> str:
    return f"{count / 1024**3:.1f} GiB"


def gather(workspace: Path) -> list[tuple[str, str]]:
    import platform
    import shutil  # here: listing the tools (`policy explain`) needs no shutil

    import psutil

    memory = psutil.virtual_memory()
    disk = shutil.disk_usage(workspace)
    try:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1, 5, 15 min)"
    except OSError:
        load = "unknown"
    physical = psutil.cpu_count(logical=False)
    return [
        ("os", f"{platform.system()} {platform.release()} ({platform.platform()})"),
        ("cpu", _cpu_model()),
        ("cores", f"{os.cpu_count()} logical" + (f", {physical} physical" if physical else "")),
        ("memory", f"{_gib(memory.total)} total, {_gib(memory.available)} available"),
        ("disk (workspace)", f"{_gib(disk.total)} total, {_gib(disk.free)} free"),
        ("python", f"{platform.python_version()} ({sys.implementation.name})"),
        ("load", load),
    ]


class SystemInfo(Tool):
    name = "system_info"
    read_only = True
    description = (
        "Operating system, CPU model and cores, memory total and available, disk of the "
        "workspace, Python version and current load."
    )
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}  # noqa: RUF012
    risk_summary = "low"

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.LOW, "reads facts about this machine")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        rows = gather(ctx.workspace.root)
        width = max(len(k) for k, _ in rows)
        return ToolOutput(
            content="\n".join(f"{k:<{width}}  {v}" for k, v in rows), summary=rows[0][1][:60]
        )
