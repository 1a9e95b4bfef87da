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
    images = settings.provider.options.get("images")
    if images is not None and hasattr(provider, "takes_images"):  # one that can see images
        if not isinstance(images, bool):
            raise ConfigError(
                f"providers.{settings.provider.name}.images must be true or false, not {images!r}"
            )
        provider.takes_images = images
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
    provider = spec.create(settings)
    missing = _missing_members(provider)
    if missing:
        raise ConfigError(
            f"provider type {spec.type!r} ({spec.origin}) made a provider without "
            f"{', '.join(missing)}: see the Provider interface in docs/extending.md"
        )
    return provider


def _missing_members(provider: object) -> list[str]:
    """What `provider` lacks of the Provider interface (agentcli.plugin_api.Provider)."""
    named = [n for n in ("name", "model") if not isinstance(getattr(provider, n, None), str)]
    return named + [n for n in ("stream", "aclose") if not callable(getattr(provider, n, None))]
