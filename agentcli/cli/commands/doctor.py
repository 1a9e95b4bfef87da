"""`agentcli doctor`: what protects this host's commands — which sandbox mechanisms are in
force, what isolation they give, what each profile allows — and, when nothing can confine a
command here, one line on what that means and how to fix it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from agentcli.config import load_config
from agentcli.output.visible import one_line
from agentcli.sandbox.confine import Sandbox, sandbox_settings
from agentcli.sandbox.mechanisms import weaker_here
from agentcli.sandbox.profiles import Profile

NOTHING_HERE = (
    "no sandbox is available here: commands run with your user's full access, so agentcli "
    "runs only commands its classifier reads as harmless without asking; install bubblewrap "
    "(apt install bubblewrap) or use Linux 5.13+ with Landlock enabled to confine them"
)
WHEN_RUN = {
    Profile.READ_ONLY: "low-risk calls run here without asking",
    Profile.WORKSPACE_WRITE: "calls someone approved (or --yes) run here",
    Profile.NETWORK: "asked every time; --yes grants it only with --allow-network",
    Profile.NONE: 'only with --sandbox none or sandbox.mode = "off" in your own config',
}


def _isolation(backend: str | None, landlock_abi: int, seccomp: bool) -> dict[str, str]:
    bwrap = backend == "bubblewrap"
    landlock = bool(landlock_abi) and backend in ("landlock", "bubblewrap")
    seatbelt = backend == "seatbelt"
    if bwrap:
        filesystem = "mount namespace"
        network = "network namespace + seccomp" if seccomp else "network namespace"
    elif landlock:
        filesystem = "Landlock"
        network = "Landlock TCP rules + seccomp" if landlock_abi >= 4 else "seccomp"
        network = network if seccomp else "Landlock TCP rules" if landlock_abi >= 4 else "none"
    else:
        filesystem = network = "Seatbelt" if seatbelt else "none"
    return {
        "filesystem": filesystem,
        "network": network,
        "processes": "PID namespace, killed with agentcli"
        if bwrap
        else "a keeper process kills the tree with agentcli"
        if landlock
        else "process group",
        "agentcli environment": "hidden (own PID namespace, capabilities dropped)"
        if bwrap
        else "hidden (Landlock scope, capabilities dropped)"
        if landlock
        else "readable",
        "protected paths": "read-only mounts; each .git pinned; new ones removed when it ends"
        if bwrap or seatbelt
        else "put back when it ends, from a baseline, through descriptors"
        if landlock
        else "classifier only",
        "file tools": "the same boundary, enforced in agentcli (descriptor walks)",
    }


def _mcp_servers(config: Any) -> list[dict[str, Any]]:
    """The configured MCP servers and the profile each runs in (not started here)."""
    from agentcli.errors import ConfigError
    from agentcli.mcp.config import servers_of

    try:
        servers = servers_of(config)
    except ConfigError as error:
        return [{"name": "?", "sandbox": None, "error": str(error)}]
    return [
        {
            "name": s.name,
            "transport": s.transport,
            "sandbox": s.sandbox or ("read-only (the default: none chosen)" if s.command else None),
        }
        for s in servers
    ]


def report(workspace: Path, add_dirs: list[str] | None = None) -> dict[str, Any]:
    config = load_config(workspace)
    sandbox = Sandbox(workspace, sandbox_settings(config, None, False, add_dirs or ()))
    found = sandbox.mechanisms
    backend = sandbox.backend
    if backend is not None:
        advice = None
    elif not sandbox.settings.enabled:
        advice = "the sandbox is off (sandbox.mode or --sandbox none)"
    else:
        advice = NOTHING_HERE
    return {
        "sandbox": {
            "active": backend is not None,
            "mode": "auto" if sandbox.settings.enabled else "off",
            "backend": backend,
            "landlock": {"abi": found.landlock_abi, "note": found.landlock_note},
            "bubblewrap": {
                "path": found.bwrap,
                "version": found.bwrap_version,
                "note": found.bwrap_note,
            },
            "seccomp": found.seccomp,
            "running_as_root": hasattr(os, "geteuid") and os.geteuid() == 0,
            "network_for_yes": sandbox.settings.allow_network,
            "isolation": _isolation(backend, found.landlock_abi, found.seccomp),
            "weaker": weaker_here(backend, found.landlock_abi),
        },
        "profiles": {p.value: {"allows": p.summary, "used": WHEN_RUN[p]} for p in Profile},
        "reach": sandbox.boundary(dict(os.environ)).describe(),
        "mcp_servers": _mcp_servers(config),
        "advice": advice,
    }


def run(workspace: Path, *, as_json: bool, add_dirs: list[str] | None = None) -> int:
    data = report(workspace, add_dirs)
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return 0
    box = data["sandbox"]
    out = sys.stdout.write
    if box["active"]:
        landlock = box["landlock"]["abi"]
        how = box["backend"] + (
            f", Landlock ABI {landlock}" if box["backend"] == "landlock" else ""
        )
        out(f"sandbox: in force ({how})\n")
    else:
        out("sandbox: NOT in force\n")
    seccomp = "sockets off outside the network profile" if box["seccomp"] else "not available"
    out(f"  {'Landlock':<21} {one_line(box['landlock']['note'])}\n")
    out(f"  {'bubblewrap':<21} {one_line(box['bubblewrap']['note'])}\n")
    out(f"  {'seccomp':<21} {seccomp}\n")
    for name, value in box["isolation"].items():
        out(f"  {name:<21} {value}\n")
    if box["weaker"]:
        out(f"weaker here (Landlock ABI {box['landlock']['abi']}):\n")
        for said in box["weaker"]:
            out(f"  {said}\n")
    out("profiles:\n")
    for name, profile in data["profiles"].items():
        out(f"  {name:<16} {profile['allows']}\n  {'':<16} ({profile['used']})\n")
    out("every tool reaches:\n")
    for line in data["reach"]:  # places by name: a directory's name may hold anything
        out(f"  {one_line(line)}\n")
    out("  the system directories commands see (to read); never agentcli's own files\n")
    if data["mcp_servers"]:
        out("MCP servers:\n")
        for row in data["mcp_servers"]:
            profile = row["sandbox"] or "none (HTTP: not a process here)"
            out(f"  {one_line(row['name']):<16} sandbox: {one_line(profile)}\n")
    if data["advice"]:
        out(f"agentcli: {one_line(data['advice'])}\n")
    return 0
