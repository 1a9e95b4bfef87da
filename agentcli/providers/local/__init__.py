"""The embedded local model (`--model local`, `local:NAME`): llama.cpp in-process, a small
model shipped in a PyPI package, no API key, no network.

Importing this package is cheap: llama_cpp is imported only when a model is loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentcli.providers.local.models import (
    INSTALL_COMMAND,
    MODELS,
    default_model,
    install_hint,
    local_available,
    model_installed,
    runtime_installed,
)

if TYPE_CHECKING:
    from agentcli.providers.local.provider import LocalOptions, LocalProvider

__all__ = [
    "DEFAULT_MODEL",
    "INSTALL_COMMAND",
    "MODELS",
    "LocalOptions",
    "LocalProvider",
    "default_model",
    "install_hint",
    "local_available",
    "model_installed",
    "runtime_installed",
]


def __getattr__(name: str) -> Any:
    if name == "DEFAULT_MODEL":  # the best installed model, looked up when asked
        return default_model()
    if name in ("LocalProvider", "LocalOptions"):
        from agentcli.providers.local import provider

        return getattr(provider, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
