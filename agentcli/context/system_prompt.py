"""The system instructions every run starts with."""

from __future__ import annotations

import os
from pathlib import Path

BASE = """You are agentcli, an agent working in a terminal on the user's project.
The workspace root is {root} (operating system: {system}). Tool paths are relative to it.
Use the tools to look before you answer; do not guess file contents. When a tool call fails
or is denied, read the error, then fix the call or continue without it. Answer concisely in
Markdown."""


def _system_name() -> str:
    """platform.system()'s answer, without importing platform (its regexes cost startup)."""
    return os.uname().sysname if hasattr(os, "uname") else "Windows"


def build_system_prompt(
    workspace: Path, extra: str | None, project: str = "", servers: str = "", *, skills: str = ""
) -> str:
    """agentcli's instructions, then the project's (AGENTS.md), the skills' names and
    descriptions, the instructions of the MCP servers the user trusts, then --system."""
    prompt = BASE.format(root=workspace, system=_system_name())
    if project:
        prompt += "\n\n" + project
    if skills:
        prompt += "\n\n" + skills
    if servers:
        prompt += "\n\n" + servers
    if extra:
        prompt += "\n\n" + extra.strip()
    from agentcli.text.decoding import shown

    return shown(prompt)  # the workspace's path and --system are names from the OS
