"""The settings of one run, as data: the model to use, its provider, the workspace and the
run's limits (agentcli.assembly resolves them from the configuration, the environment and
the flags), and the checks of a server's URL that need nothing but the URL."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from agentcli.config import Config
from agentcli.config.schema import SETTINGS, range_problem
from agentcli.errors import ConfigError, UsageError
from agentcli.records import dataclass, field

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


def base_url_problem(url: str) -> str | None:
    """What is wrong with a server's URL, or None: it needs http:// or https:// (a bare
    `127.0.0.1:9` would be read as a scheme and a path), and no byte that is not UTF-8."""
    from agentcli.text.decoding import shown

    if shown(url) != url:
        return f"holds bytes that are not UTF-8 ({shown(url)!r})"
    if _CONTROL.search(url):  # no URL holds one (httpx refuses it when sending)
        return f"holds a control character ({url!r}): check for a stray character"
    scheme, sep, _ = url.partition("://")
    if sep and scheme.lower() in ("http", "https"):
        return _address_problem(url)
    if sep:
        return f"must start with http:// or https://, not {scheme}://"
    host = url.split("/")[0].rsplit(":", 1)[0].strip("[]")
    local = host in ("localhost", "::1", ":") or host.startswith("127.")
    return f"needs a scheme: {'http' if local else 'https'}://{url}"


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

# What no host name or address holds: white space, control characters, and the characters
# RFC 3986 leaves out of URLs. (A name of other letters is IDNA's: httpx encodes it.)
_NOT_IN_A_HOST = re.compile(r"[\s\x00-\x1f\x7f<>\"{}|\\^`]")


def _address_problem(url: str) -> str | None:
    """A host that cannot be one, or a port that is not a number from 1 to 65535, found
    when the settings are read rather than as a failed connection after every retry."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        return f"does not parse as a URL ({error}): check its host and port"
    host = parts.hostname or ""
    if not host:
        return "has no host: give one, such as http://127.0.0.1:8080/v1"
    if _NOT_IN_A_HOST.search(host):
        return f"has a host that cannot be one ({host!r}): check for a space or a typo"
    if port == 0:
        return "has port 0, which no server listens on: give its real port"
    return None


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


def context_window(config: Config, model: str) -> int:
    """`context.windows."PROVIDER:MODEL"`, else `context.window`. Read by its flat key, not
    as a table: a model's name may hold a dot (`openai:gpt-4.1`)."""
    window = config.get(f"context.windows.{model}")
    if not isinstance(window, int) or isinstance(window, bool):
        return config.get("context.window")
    limits = SETTINGS["context.window"]
    problem = range_problem(f'context.windows."{model}"', window, limits.minimum, limits.maximum)
    if problem:
        raise ConfigError(f"{problem} ({config.source(f'context.windows.{model}')})")
    return window
