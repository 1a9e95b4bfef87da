"""A run's settings, resolved above the parts: the flags, the environment and the
configuration, the model and its provider, the limits and the key."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli.config import Config, load_config
from agentcli.config.schema import model_name_problem
from agentcli.errors import ConfigError, UsageError
from agentcli.providers.configured import parse_model, providers_of
from agentcli.records import fields
from agentcli.settings import (
    ModelSpec,
    ProviderConfig,
    RunSettings,
    argv_secret_problem,
    base_url_problem,
    check_base_url,
)


def _default_model(config: Config, env: Mapping[str, str], base_url: str | None) -> str:
    chosen, source = model_choice(config, env, base_url)
    problem = model_name_problem(chosen, source)
    if problem is not None:
        raise ConfigError(problem)
    return chosen


def model_choice(
    config: Config, env: Mapping[str, str], base_url: str | None = None
) -> tuple[str, str]:
    """The model to use as written (`openai`, `work:big`...) and where that came from: the
    flag, the variable, the file that sets `model`, or which default and why."""
    configured = config.get("model")
    if configured:
        return configured, config.source("model")
    for provider in ("openai", "anthropic"):
        variable = f"{provider.upper()}_API_KEY"
        server = f"providers.{provider}.base_url"
        if env.get(variable):
            return provider, f"default: {variable} is set"
        if provider == "openai" and base_url:
            return provider, "default: --base-url is given"
        if config.get(server):
            where = config.source(server)
            if where.startswith("env "):
                return provider, f"default: {where.removeprefix('env ')} is set"
            return provider, f"default: {server} is set in {where}"
    from agentcli.providers.local import install_hint, local_available

    if config.get("providers.local.auto") is not False and local_available():
        # the embedded model, when installed (`[providers.local] auto = false`)
        return "local", "default: the embedded model is installed"
    raise ConfigError(
        "no model is configured; the three ways to get one: set OPENAI_API_KEY (or point "
        "--base-url at an OpenAI-compatible server such as Ollama), set ANTHROPIC_API_KEY, or "
        f"{install_hint()}"
    )


def resolve_settings(
    *,
    model: str | None,
    base_url: str | None,
    cwd: str | None,
    system: str | None,
    max_steps: int | None,
    timeout: float | None,
    output: str,
    yes: bool,
    deny: bool,
    debug: bool,
    allow: list[str] | None = None,
    forbid: list[str] | None = None,
    sandbox: str | None = None,
    allow_network: bool = False,
    add_dir: list[str] | None = None,
    env: Mapping[str, str] = os.environ,
    agent: str | None = None,
) -> RunSettings:
    if yes and deny:
        raise UsageError("--yes and --deny contradict each other; pass one of them")
    if max_steps is not None and max_steps < 1:
        raise UsageError(f"--max-steps must be at least 1, not {max_steps}")
    if timeout is not None and not math.isfinite(timeout):
        raise UsageError(f"--timeout must be a finite number of seconds, not {timeout}")
    if timeout is not None and timeout <= 0:
        raise UsageError(f"--timeout must be a positive number of seconds, not {timeout:g}")
    if output not in ("text", "json", "jsonl"):
        raise UsageError(f"--output must be text, json or jsonl, not {output!r}")
    if sandbox is not None and sandbox not in ("auto", "none"):
        raise UsageError(f"--sandbox must be auto or none, not {sandbox!r}")
    workspace = Path(cwd or os.getcwd()).expanduser()
    if not workspace.is_dir():
        raise UsageError(f"--cwd {str(workspace)!r} is not a directory")
    workspace = workspace.resolve()

    flags = {"model": model, "max_steps": max_steps, "timeout": timeout}
    from agentcli.policy.setup import rule_set  # checks every rule now: a bad one is exit 2

    labels = {"model": "--model", "max_steps": "--max-steps", "timeout": "--timeout"}
    config = load_config(workspace, flags=flags, flag_labels=labels, env=env)
    rule_set(config, list(allow or ()), list(forbid or ()))
    from agentcli.sandbox.confine import sandbox_settings  # a bad --add-dir is exit 2, now

    sandbox_settings(config, sandbox, allow_network, add_dir or ())
    if agent is not None:
        spec, provider = _remote_agent(agent, model, base_url)
    else:
        providers = providers_of(config)
        spec = parse_model(_default_model(config, env, base_url), providers)
        provider = providers[spec.provider]
    if base_url and agent is None:  # --base-url applies to whichever provider the model names
        provider = ProviderConfig(**{**_fields(provider), "base_url": base_url})
        check_base_url(base_url, "--base-url")
    elif provider.base_url and agent is None:
        key = f"providers.{provider.name}.base_url"
        check_base_url(provider.base_url, config.source(key), key)
    api_key = api_key_of(provider, env)
    from agentcli.providers.table import provider_spec

    kind = provider_spec(provider.type)
    official = kind.official_url if kind is not None else ""
    if not api_key and official and (provider.base_url or official).rstrip("/") == official:
        raise ConfigError(
            f"{provider.api_key_env} is not set: export it, or point --base-url at a server "
            "that needs no key"
        )
    return RunSettings(
        model=spec,
        provider=provider,
        api_key=api_key,
        workspace=workspace,
        config=config,
        system=system,
        max_steps=config.get("max_steps"),
        timeout=config.get("timeout"),
        output=output,  # type: ignore[arg-type]
        yes=yes or bool(config.get("policy.yes")),
        deny=deny,
        debug=debug,
        allow=tuple(allow or ()),
        forbid=tuple(forbid or ()),
        sandbox=sandbox,
        allow_network=allow_network,
        add_dirs=tuple(add_dir or ()),
    )


def api_key_of(provider: ProviderConfig, env: Mapping[str, str]) -> str | None:
    """The provider's key from its variable; one that an HTTP header cannot carry (not
    printable ASCII: a pasted key with a stray byte or letter) is a configuration error."""
    key = env.get(provider.api_key_env) or None
    if key is not None and not (key.isascii() and key.isprintable()):
        raise ConfigError(
            f"{provider.api_key_env} holds characters an HTTP header cannot carry (a key is "
            "printable ASCII); check its value"
        )
    return key


def _remote_agent(
    url: str, model: str | None, base_url: str | None
) -> tuple[ModelSpec, ProviderConfig]:
    """`--agent URL`: a remote AG-UI agent answers in the place of a model."""
    if model or base_url:
        flag = "--model" if model else "--base-url"
        raise UsageError(f"--agent and {flag} contradict each other: the agent is the model")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--agent {url!r} is not an http(s) URL of an AG-UI endpoint")
    address = base_url_problem(url)
    if address is not None:
        raise UsageError(f"--agent {address}")
    problem = argv_secret_problem(url, "--agent")
    if problem is not None:
        raise UsageError(problem)
    from agentcli.agui.client import TOKEN_ENV

    return ModelSpec("agent", url), ProviderConfig("agent", "agui", url, TOKEN_ENV)


def _fields(provider: ProviderConfig) -> dict[str, Any]:
    return {f.name: getattr(provider, f.name) for f in fields(provider)}


def with_model(
    settings: RunSettings, text: str, env: Mapping[str, str] = os.environ
) -> RunSettings:
    """The same settings with another model (`/model NAME` in the REPL)."""
    from agentcli.records import replace

    problem = model_name_problem(text, "/model")
    if problem is not None:  # a subagent's or a command's model comes here too
        raise UsageError(problem)
    providers = providers_of(settings.config)
    spec = parse_model(text, providers, flag="/model")
    provider = providers[spec.provider]
    if provider.name == settings.provider.name:
        provider = settings.provider  # keeps a --base-url given for this provider
    return replace(settings, model=spec, provider=provider, api_key=api_key_of(provider, env))
