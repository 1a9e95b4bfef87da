"""Builds the provider a run's settings name."""

from __future__ import annotations

from agentcli.errors import ConfigError, UsageError
from agentcli.providers.base import Provider
from agentcli.settings import RunSettings


def make_provider(settings: RunSettings) -> Provider:
    provider = _make(settings)
    if hasattr(provider, "max_wait"):  # an HTTP provider: how long to wait for a server
        config = settings.config
        provider.first_byte_timeout = _seconds(config, "requests.first_byte_timeout")
        provider.max_wait = _seconds(config, "requests.max_wait")
    return provider


def _seconds(config, key: str) -> float:  # type: ignore[no-untyped-def]
    value = float(config.get(key))
    if value <= 0:
        raise ConfigError(f"{key} must be a positive number of seconds, not {value:g}")
    return value


def _make(settings: RunSettings) -> Provider:
    from agentcli.providers.table import provider_spec

    spec = provider_spec(settings.provider.type)  # a built-in, or an `agentcli.providers` plug-in
    if spec is None:
        raise UsageError(f"provider type {settings.provider.type!r} is not available")
    return spec.create(settings)
