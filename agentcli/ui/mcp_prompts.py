"""MCP prompts as REPL slash commands: `/mcp__SERVER__PROMPT args` asks the server for the
prompt and sends it as the next message. Arguments are `name=value` words; a prompt with
one argument takes the whole rest of the line."""

from __future__ import annotations

import shlex
from typing import Any

from agentcli.errors import UsageError
from agentcli.mcp.tools import tool_name


def prompt_commands(registry: Any) -> dict[str, tuple[Any, Any]]:
    """`mcp__SERVER__PROMPT` → (the server's source, the prompt), for every running server."""
    found = {}
    for source in registry.sources:
        for prompt in getattr(source, "prompts", []):
            found[tool_name(source.config.name, prompt.name)] = (source, prompt)
    return found


def server_of(command: str, registry: Any) -> str | None:
    """The configured MCP server `/mcp__SERVER__PROMPT` names (server names hold no
    `__`), started or not."""
    name = command.removeprefix("mcp__").partition("__")[0]
    for source in registry.sources:
        if source.kind == "mcp" and getattr(source, "config", None) and source.config.name == name:
            return name
    return None


def describe(prompt: Any) -> str:
    names = " ".join(f"{a.name}=…" for a in prompt.arguments or [])
    return (prompt.description or prompt.title or "an MCP prompt") + (
        f" ({names})" if names else ""
    )


def parse_arguments(prompt: Any, text: str) -> dict[str, str]:
    declared = list(prompt.arguments or [])
    if len(declared) == 1 and "=" not in text:
        values = {declared[0].name: text} if text else {}
    else:
        try:
            words = shlex.split(text)
        except ValueError as error:
            raise UsageError(f"cannot read the arguments: {error}") from None
        values = {}
        for word in words:
            key, equals, value = word.partition("=")
            if not equals:
                raise UsageError(f"write the arguments as name=value, not {word!r}")
            values[key] = value
    missing = [a.name for a in declared if a.required and a.name not in values]
    if missing:
        raise UsageError(f"/{prompt.name} needs {', '.join(f'{m}=…' for m in missing)}")
    return values


async def render(source: Any, prompt: Any, text: str) -> str:
    return await source.prompt_text(prompt.name, parse_arguments(prompt, text))
