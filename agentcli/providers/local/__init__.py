"""The embedded local model (`--model local`, `local:NAME`): llama.cpp in-process, a small
model shipped in a PyPI package, no API key, no network.

Importing this package is cheap: llama_cpp is imported only when a model is loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentcli.errors import ConfigError
from agentcli.providers.local.models import (
    MODELS,
    default_model,
    install_command,
    install_hint,
    local_available,
    model_installed,
    runtime_installed,
)

if TYPE_CHECKING:
    from agentcli.providers.base import ListedModel
    from agentcli.providers.local.provider import LocalOptions, LocalProvider
    from agentcli.settings import RunSettings

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "LocalOptions",
    "LocalProvider",
    "default_model",
    "install_command",
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


def from_settings(settings: RunSettings) -> LocalProvider:
    """The embedded model a `[providers.NAME]` table of type local describes."""
    if not runtime_installed():
        raise ConfigError(f"the local model is not installed: {install_hint()}")
    from agentcli.providers.local.provider import LocalProvider

    config = settings.provider
    return LocalProvider(
        settings.model.name,
        name=config.name,
        options=dict(config.options),
        workspace=settings.workspace,
    )


def listed_models() -> list[ListedModel]:
    """The installed models, for `agentcli models`."""
    from agentcli.providers.base import ListedModel

    return [
        ListedModel(m.name, f"{m.title}, {m.size_mb} MB, {m.license}")
        for m in MODELS.values()
        if local_available(m.name)
    ]
