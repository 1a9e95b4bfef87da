"""The one table of provider types, filled from the built-ins (agentcli.providers.builtin)
and, for a type no built-in has, the `agentcli.providers` plug-ins, both through the same
`register_providers(register)` hook and ProviderRegistrar. Reading it for a built-in type
imports no provider module and scans no entry points."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentcli.plugins import PROVIDERS_GROUP, entry_points, once, origin
from agentcli.providers.spec import ProviderSpec
from agentcli.records import replace


class ProviderRegistrar:
    """The `register` a `register_providers` is given: `register(spec)`, or the short form
    `register(type, factory, *, default_model="")` with `factory(settings)` -> Provider."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.specs: dict[str, ProviderSpec] = {}

    def __call__(
        self,
        kind: str | ProviderSpec,
        factory: Callable[[Any], Any] | None = None,
        *,
        default_model: str = "",
    ) -> ProviderSpec:
        if isinstance(kind, ProviderSpec):
            spec = replace(kind, origin=self.origin)
        elif factory is None:
            raise TypeError(f"register({kind!r}) needs a factory(settings) or a ProviderSpec")
        else:
            spec = ProviderSpec(kind, factory, default_model=default_model, origin=self.origin)
        self.specs.setdefault(spec.type, spec)  # the first registration of a type wins
        return spec


def builtin_specs() -> dict[str, ProviderSpec]:
    from agentcli.providers.builtin import register_providers

    registrar = ProviderRegistrar("builtin")
    register_providers(registrar)
    return registrar.specs


def provider_spec(kind: Any) -> ProviderSpec | None:
    """A type's spec: a built-in's, else an `agentcli.providers` plug-in's."""
    if not isinstance(kind, str):
        return None
    spec = builtin_specs().get(kind)
    if spec is not None:
        return spec
    return provider_plugins()[0].get(kind)


def provider_plugins() -> tuple[dict[str, ProviderSpec], list[str]]:
    """Provider types from `agentcli.providers` plug-ins, and what went wrong loading them
    (loaded once for a process that keeps its plug-ins: agentcli.plugins.once)."""
    found, problems = once("provider plug-ins", _load_provider_plugins)
    return dict(found), list(problems)


def _load_provider_plugins() -> tuple[dict[str, ProviderSpec], list[str]]:
    found: dict[str, ProviderSpec] = {}
    problems = []
    for entry in entry_points(PROVIDERS_GROUP):
        registrar = ProviderRegistrar(origin(entry))
        try:
            entry.load().register_providers(registrar)
        except Exception as error:
            problems.append(
                f"plug-in {entry.name} ({registrar.origin}) could not be loaded: "
                f"{type(error).__name__}: {error}; skipped"
            )
        for kind, spec in registrar.specs.items():  # what it registered before it failed too
            found.setdefault(kind, spec)
    return found, problems
