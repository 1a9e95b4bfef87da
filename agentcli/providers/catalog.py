"""The models the configured providers offer (`agentcli models`): each OpenAI-compatible
server's `GET /models`, Anthropic's models endpoint, and the local models installed. The
servers are asked at once; one that does not answer becomes its provider's error, and the
others are still listed."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

from agentcli.config import Config
from agentcli.errors import ConfigError, ProviderError
from agentcli.providers.base import ListedModel
from agentcli.providers.configured import providers_of
from agentcli.providers.table import provider_spec
from agentcli.records import dataclass, field, replace
from agentcli.settings import ModelSpec, ProviderConfig, RunSettings, check_base_url


@dataclass(slots=True)
class Offer:
    """One provider's models, or why they could not be listed."""

    provider: ProviderConfig
    models: list[ListedModel] = field(default_factory=list)
    error: str | None = None

    def to_wire(self) -> dict[str, object]:
        return {
            "provider": self.provider.name,
            "type": self.provider.type,
            "baseUrl": self.provider.base_url,
            "models": [
                {"model": f"{self.provider.name}:{m.id}", "id": m.id, "detail": m.detail}
                for m in self.models
            ],
            "error": self.error,
        }


def providers_to_ask(
    config: Config, env: Mapping[str, str], base_url: str | None
) -> list[ProviderConfig]:
    """With `base_url`: that OpenAI-compatible server alone. Otherwise every provider that
    is set up: a key in its variable or a server of its own, and the local models when
    their runtime is installed."""
    providers = providers_of(config)
    if base_url:
        check_base_url(base_url, "--base-url")
        return [replace(providers["openai"], base_url=base_url)]
    chosen = []
    for provider in providers.values():
        spec = provider_spec(provider.type)
        if spec is not None and spec.installed is not None:  # in-process: no key, no server
            if spec.installed():
                chosen.append(provider)
            continue
        official = spec.official_url if spec is not None else ""
        own_server = (provider.base_url or official).rstrip("/") != official
        if env.get(provider.api_key_env) or own_server:
            if provider.base_url:
                key = f"providers.{provider.name}.base_url"
                check_base_url(provider.base_url, config.source(key), key)
            chosen.append(provider)
    if not chosen:
        raise ConfigError(
            "no provider is set up to ask: set OPENAI_API_KEY or ANTHROPIC_API_KEY, pass "
            "--base-url URL of an OpenAI-compatible server, or install the local model"
        )
    return chosen


async def gather_offers(
    providers: list[ProviderConfig], config: Config, env: Mapping[str, str]
) -> list[Offer]:
    return list(await asyncio.gather(*(_offer(p, config, env) for p in providers)))


async def _offer(provider: ProviderConfig, config: Config, env: Mapping[str, str]) -> Offer:
    spec = provider_spec(provider.type)
    if spec is not None and spec.list_models is not None:  # listed without a client
        return Offer(provider, spec.list_models())
    from agentcli.providers.factory import make_provider

    settings = RunSettings(
        model=ModelSpec(provider.name, ""),
        provider=provider,
        api_key=env.get(provider.api_key_env) or None,
        workspace=Path.cwd(),
        config=config,
    )
    client = make_provider(settings)
    try:
        return Offer(provider, await client.list_models())  # type: ignore[attr-defined]
    except ProviderError as error:
        if error.status == 404:  # the usual cause: a base URL without its /v1
            where = getattr(client, "base_url", provider.base_url)
            return Offer(
                provider,
                error=f"{provider.name}: {where} has no model listing "
                f"(HTTP 404: {error.detail}); check the base URL",
            )
        return Offer(provider, error=str(error))
    finally:
        await client.aclose()
