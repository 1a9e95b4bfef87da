"""The settings of one run: the configuration (files, environment, flags) resolved into the
model to use, its provider, and the run's limits."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from agentcli.config import Config, load_config
from agentcli.config.schema import SETTINGS, range_problem
from agentcli.errors import ConfigError, UsageError
from agentcli.records import dataclass, field, fields

OutputFormat = Literal["text", "json", "jsonl"]


@dataclass(frozen=True, slots=True)
class ModelSpec:
    provider: str
    name: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.name}"


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    name: str  # as written in --model (`work` in `work:big`)
    type: str  # the wire protocol: openai
    base_url: str | None
    api_key_env: str
    default_model: str | None = None
    aliases: Mapping[str, str] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)  # the whole [providers.NAME] table


@dataclass(frozen=True, slots=True)
class RunSettings:
    model: ModelSpec
    provider: ProviderConfig
    api_key: str | None
    workspace: Path
    config: Config
    system: str | None = None
    max_steps: int = 20
    timeout: float | None = None
    output: OutputFormat = "text"
    yes: bool = False
    deny: bool = False
    debug: bool = False
    allow: tuple[str, ...] = ()  # --allow rules
    forbid: tuple[str, ...] = ()  # --forbid rules
    sandbox: str | None = None  # --sandbox: auto or none; None: the configuration decides
    allow_network: bool = False  # --allow-network
    add_dirs: tuple[str, ...] = ()  # --add-dir: places every tool may also reach

    @property
    def base_url(self) -> str | None:
        return self.provider.base_url

    @property
    def api_key_env(self) -> str:
        return self.provider.api_key_env


def providers_of(config: Config) -> dict[str, ProviderConfig]:
    """Built-in providers, overlaid and extended by `[providers.NAME]` tables."""
    from agentcli.providers.spec import builtin_specs, provider_spec

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
            from agentcli.plugins import provider_plugins

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
    from agentcli.providers.spec import provider_spec

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


def _default_model(config: Config, env: Mapping[str, str], base_url: str | None) -> str:
    return model_choice(config, env, base_url)[0]


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
    from agentcli.providers.spec import provider_spec

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


def base_url_problem(url: str) -> str | None:
    """What is wrong with a server's URL, or None: it needs http:// or https:// (a bare
    `127.0.0.1:9` would be read as a scheme and a path), and no byte that is not UTF-8."""
    from agentcli.decoding import shown

    if shown(url) != url:
        return f"holds bytes that are not UTF-8 ({shown(url)!r})"
    scheme, sep, _ = url.partition("://")
    if sep and scheme.lower() in ("http", "https"):
        return None
    if sep:
        return f"must start with http:// or https://, not {scheme}://"
    host = url.split("/")[0].rsplit(":", 1)[0].strip("[]")
    local = host in ("localhost", "::1", ":") or host.startswith("127.")
    return f"needs a scheme: {'http' if local else 'https'}://{url}"


def argv_secret_problem(url: str, flag: str) -> str | None:
    """A URL given on the command line must not carry a password: agentcli's argv is what
    `ps` shows every process on the machine, a sandboxed command's included."""
    _, sep, rest = url.partition("://")
    userinfo = rest.split("/", 1)[0].rpartition("@")[0] if sep else ""
    if not userinfo:
        return None
    return (
        f"{flag} carries a password, which any process can read from agentcli's command line "
        "(ps); give the URL without it and the key in an environment variable (the "
        "provider's api_key_env), or set the whole URL in an environment variable "
        "(OPENAI_BASE_URL) or the configuration"
    )


def check_base_url(url: str, source: str, key: str = "base_url") -> None:
    """A usage error for a flag (`source` "--base-url"), else a configuration error naming
    the variable (`env NAME`) or the file the URL came from."""
    problem = base_url_problem(url)
    if problem is None and source.startswith("--"):
        problem = argv_secret_problem(url, source)
        if problem is not None:
            raise UsageError(problem)
    if problem is None:
        return
    if source.startswith("--"):
        raise UsageError(f"{source} {problem}")
    if source.startswith("env "):
        raise ConfigError(f"{source.removeprefix('env ')} {problem}")
    raise ConfigError(f"{key} {problem} (in {source})")


def _remote_agent(
    url: str, model: str | None, base_url: str | None
) -> tuple[ModelSpec, ProviderConfig]:
    """`--agent URL`: a remote AG-UI agent answers in the place of a model."""
    if model or base_url:
        flag = "--model" if model else "--base-url"
        raise UsageError(f"--agent and {flag} contradict each other: the agent is the model")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--agent {url!r} is not an http(s) URL of an AG-UI endpoint")
    problem = argv_secret_problem(url, "--agent")
    if problem is not None:
        raise UsageError(problem)
    from agentcli.agui.client import TOKEN_ENV

    return ModelSpec("agent", url), ProviderConfig("agent", "agui", url, TOKEN_ENV)


def _fields(provider: ProviderConfig) -> dict[str, Any]:
    return {f.name: getattr(provider, f.name) for f in fields(provider)}


def context_window(config: Config, model: str) -> int:
    """`context.windows."PROVIDER:MODEL"`, else `context.window`."""
    windows = config.table("context.windows")
    window = windows.get(model) if isinstance(windows, dict) else None
    if not isinstance(window, int) or isinstance(window, bool):
        return config.get("context.window")
    limits = SETTINGS["context.window"]
    problem = range_problem(f'context.windows."{model}"', window, limits.minimum, limits.maximum)
    if problem:
        raise ConfigError(f"{problem} ({config.source(f'context.windows.{model}')})")
    return window


def with_model(
    settings: RunSettings, text: str, env: Mapping[str, str] = os.environ
) -> RunSettings:
    """The same settings with another model (`/model NAME` in the REPL)."""
    from agentcli.records import replace

    providers = providers_of(settings.config)
    spec = parse_model(text, providers, flag="/model")
    provider = providers[spec.provider]
    if provider.name == settings.provider.name:
        provider = settings.provider  # keeps a --base-url given for this provider
    return replace(settings, model=spec, provider=provider,
                   api_key=api_key_of(provider, env))  # fmt: skip
