"""The composition root: everything a session is made of is put together here, above its
parts — the settings (settings.py), the tools from every source (tools.py), and the agent
with its sandbox, policy, executor, provider and the steps around each tool call
(session.py). Whatever starts a session (`run`, the REPL, `serve`, a subagent, `mcp serve`)
asks this package; the parts below it never import it."""

from agentcli.assembly.settings import (
    api_key_of,
    model_choice,
    resolve_settings,
    with_model,
)
from agentcli.assembly.tools import (
    add_extensions,
    build_registry,
    builtin_tools,
    provider_tools,
    session_registry,
)

__all__ = [
    "add_extensions",
    "api_key_of",
    "build_registry",
    "builtin_tools",
    "model_choice",
    "provider_tools",
    "resolve_settings",
    "session_registry",
    "with_model",
]
