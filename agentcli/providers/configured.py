"""The providers a configuration has: the built-in presets overlaid and extended by its
`[providers.NAME]` tables, and `PROVIDER:MODEL` read against them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentcli.config import Config
from agentcli.errors import ConfigError, UsageError
from agentcli.settings import ModelSpec, ProviderConfig


def providers_of(config: Config) -> dict[str, ProviderConfig]:
    """Built-in providers, overlaid and extended by `[providers.NAME]` tables."""
    from agentcli.providers.table import builtin_specs, provider_spec

    builtins = builtin_specs()
    types = [kind for kind, spec in builtins.items() if spec.configurable]
    tables: dict[str, dict[str, Any]] = {
        kind: {"type": kind, "api_key_env": spec.api_key_env}
        for kind, spec in builtins.items()
        if spec.preset
    }
    for name, values in config.table("providers").items():
        if not isinstance(values, dict):
            raise ConfigError(f"providers.{name} must be a table ([providers.{name}])")
        tables.setdefault(name, {}).update(values)
    providers = {}
    for name, values in tables.items():
        kind = values.get("type", name if name in types else None)
        spec = provider_spec(kind)
        if spec is None or not spec.configurable:
            from agentcli.providers.table import provider_plugins

            found, problems = provider_plugins()
            raise ConfigError(
                f"providers.{name}.type must be one of: {', '.join([*types, *found])} "
                f"(in {config.source(f'providers.{name}.type')})"
                + "".join(f"; {problem}" for problem in problems)
            )
        aliases = values.get("models", {})
        if not isinstance(aliases, dict):
            raise ConfigError(f"providers.{name}.models must be a table of alias = model name")
        providers[name] = ProviderConfig(
            name=name,
            type=kind,
            base_url=values.get("base_url"),
            api_key_env=values.get("api_key_env") or f"{name.upper()}_API_KEY",
            default_model=values.get("model"),
            aliases={str(k): str(v) for k, v in aliases.items()},
            options=values,
        )
    return providers


def _default_model_name(kind: str) -> str:
    from agentcli.providers.table import provider_spec

    spec = provider_spec(kind)
    return spec.model() if spec is not None else ""


def parse_model(
    text: str, providers: Mapping[str, ProviderConfig], flag: str = "--model"
) -> ModelSpec:
    """`PROVIDER:MODEL` (the model part may hold colons: `openai:llama3.1:8b`), where MODEL
    may be an alias of that provider; a bare provider name means its default model; any
    other bare name is an OpenAI-compatible model. `flag` is what errors name (`/model`
    in the REPL)."""
    provider, sep, name = text.partition(":")
    if not sep:
        if text in providers:
            config = providers[text]
            return ModelSpec(text, config.default_model or _default_model_name(config.type))
        return ModelSpec("openai", text)
    if provider not in providers:
        raise UsageError(
            f"unknown provider {provider!r} in {flag} {text!r}; use PROVIDER:MODEL with "
            f"PROVIDER one of: {', '.join(sorted(providers))} (e.g. openai:gpt-4.1-mini), "
            "or define it under [providers.NAME] in the configuration"
        )
    if not name:
        raise UsageError(f"{flag} {text!r} names no model; use PROVIDER:MODEL")
    return ModelSpec(provider, providers[provider].aliases.get(name, name))
