"""`[mcp.servers.NAME]`: the MCP servers a session starts, read and checked.

stdio: `command`, `args`, `cwd` (relative to the workspace), `env` = names of variables to
pass from agentcli's environment (their values are never copied into the file).
HTTP: `url`, `headers` whose values may name variables as `${NAME}`, `transport` =
"http" (streamable HTTP) | "sse" (the legacy HTTP+SSE transport); unset: streamable HTTP,
falling back to SSE when the server answers as a legacy one does. `oauth` = false turns off
the OAuth login a server may ask for (it is off anyway when `headers` set Authorization).
Both: `trusted` (honour the server's tool annotations; its instructions reach the system
prompt), `start_timeout` and `tool_timeout` (the most one call may take) in seconds,
`log_level` (the least severe of its log messages shown: one of LOG_LEVELS, or "off"), and
per tool `[mcp.servers.NAME.tools.TOOL] risk = "low" | "medium" | "high"` and `timeout` =
seconds (that tool's calls; beats `tool_timeout`).
stdio servers run in the OS sandbox, as commands do: `sandbox` = "read-only" |
"workspace-write" | "network" | "none" (unset: "read-only"; the user, never the server,
widens it), `dirs` = more places it may reach ("DIR" read-write, "DIR:ro")."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli.errors import ConfigError
from agentcli.records import dataclass, field
from agentcli.regular_files import read_text

SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
DEFAULT_START_TIMEOUT = 30.0
MAX_START_TIMEOUT = 600.0
DEFAULT_TOOL_TIMEOUT = 120.0  # as a shell command's default: a call that hangs ends
MAX_TOOL_TIMEOUT = 86_400.0
RISK_LABELS = ("low", "medium", "high")
# The protocol's levels (syslog's), least severe first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
DEFAULT_LOG_LEVEL = "warning"
# Narrowest first. A server with none chosen runs read-only: what it fails to do there is
# said, with the setting that would let it (agentcli.mcp.reach), and never tried wider.
SANDBOX_PROFILES = ("read-only", "workspace-write", "network", "none")
DEFAULT_SANDBOX = "read-only"
HTTP_TRANSPORTS = {"http": "streamable-http", "streamable-http": "streamable-http", "sse": "sse"}


@dataclass(frozen=True, slots=True)
class ServerConfig:
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    cwd: str | None = None
    env: tuple[str, ...] = ()  # names of variables passed through
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)  # values may hold ${VAR}
    trusted: bool = False
    start_timeout: float = DEFAULT_START_TIMEOUT
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    tool_risks: Mapping[str, str] = field(default_factory=dict)
    tool_timeouts: Mapping[str, float] = field(default_factory=dict)  # per tool, seconds
    # stdio: the sandbox profile the user chose; None: DEFAULT_SANDBOX (see `profile`)
    sandbox: str | None = None
    dirs: tuple[str, ...] = ()  # stdio: more places it may reach (DIR, or DIR:ro)
    http_transport: str | None = None  # "streamable-http" | "sse"; None: either, found out
    oauth: bool = True  # a URL server may ask for an OAuth login (`agentcli mcp login`)
    log_level: str = DEFAULT_LOG_LEVEL  # or "off"

    def timeout_of(self, tool: str) -> tuple[float, str]:
        """The most a call of `tool` may take, and the setting that says so."""
        if tool in self.tool_timeouts:
            return self.tool_timeouts[tool], f"mcp.servers.{self.name}.tools.{tool}.timeout"
        return self.tool_timeout, f"mcp.servers.{self.name}.tool_timeout"

    @property
    def profile(self) -> str | None:
        """The sandbox profile a stdio server runs in: the one chosen, else read-only."""
        return None if self.url else (self.sandbox or DEFAULT_SANDBOX)

    @property
    def transport(self) -> str:
        if not self.url:
            return "stdio"
        return "sse" if self.http_transport == "sse" else "http"

    @property
    def uses_oauth(self) -> bool:
        """An Authorization header the user set is their credential: no login then."""
        given = {name.lower() for name in self.headers}
        return bool(self.url) and self.oauth and "authorization" not in given

    def shown(self) -> str:
        """One line: what runs, or where it connects."""
        if self.url:
            return self.url
        import shlex

        return shlex.join([self.command or "", *self.args])

    def environment(self, source: Mapping[str, str] | None = None) -> dict[str, str]:
        """The variables the user named, with the values they have now (absent: left out)."""
        source = os.environ if source is None else source
        return {name: source[name] for name in self.env if name in source}

    def working_directory(self, workspace: Path) -> str:
        return str((workspace / self.cwd) if self.cwd else workspace)

    def resolved_headers(self, source: Mapping[str, str] | None = None) -> dict[str, str]:
        """Header values with `${VAR}` replaced; a variable that is not set is an error."""
        source = os.environ if source is None else source

        def value(match: re.Match[str]) -> str:
            if match.group(1) not in source:
                raise ConfigError(
                    f"mcp.servers.{self.name}.headers needs the variable {match.group(1)}, "
                    "which is not set"
                )
            return source[match.group(1)]

        return {name: VARIABLE.sub(value, text) for name, text in self.headers.items()}


def _fail(name: str, key: str, problem: str) -> ConfigError:
    error = ConfigError(f"mcp.servers.{name}.{key}: {problem}")
    error.key = f"mcp.servers.{name}.{key}"  # type: ignore[attr-defined]  # for its line
    return error


def _strings(name: str, key: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(name, key, "must be a list of strings")
    return tuple(value)


def _seconds(name: str, key: str, table: dict[str, Any], default: float, most: float) -> float:
    value = table.get(key, default)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not (math.isfinite(value) and 0 < value <= most)
    ):
        raise _fail(name, key, f"must be a number of seconds in (0, {most:g}]")
    return float(value)


def parse_server(name: str, table: Any) -> ServerConfig:
    if not SERVER_NAME.match(name) or "__" in name:
        raise ConfigError(
            f"mcp.servers.{name}: a server name is 1-32 letters, digits, _ or - (no '__')"
        )
    if not isinstance(table, dict):
        raise ConfigError(f"mcp.servers.{name} must be a table with command = ... or url = ...")
    command, url = table.get("command"), table.get("url")
    if bool(command) == bool(url):
        raise ConfigError(
            f'mcp.servers.{name}: give either command = "..." (stdio) or url = "..." '
            "(streamable HTTP)"
        )
    if command is not None and not isinstance(command, str):
        raise _fail(name, "command", "must be a string")
    if url is not None and (
        not isinstance(url, str) or not url.startswith(("http://", "https://"))
    ):
        raise _fail(name, "url", "must be an http:// or https:// URL")
    if url is not None:
        from agentcli.settings import base_url_problem

        if problem := base_url_problem(url):  # a port out of range, a control character
            raise _fail(name, "url", problem)
    env = _strings(name, "env", table.get("env"))
    for variable in env:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", variable):
            raise _fail(
                name, "env", f"{variable!r} is not a variable name (give names, not values)"
            )
    headers = table.get("headers") or {}
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise _fail(
            name, "headers", 'must be a table of strings, e.g. {Authorization = "Bearer ${TOKEN}"}'
        )
    timeout = _seconds(name, "start_timeout", table, DEFAULT_START_TIMEOUT, MAX_START_TIMEOUT)
    tool_timeout = _seconds(name, "tool_timeout", table, DEFAULT_TOOL_TIMEOUT, MAX_TOOL_TIMEOUT)
    trusted = table.get("trusted", False)
    if not isinstance(trusted, bool):
        raise _fail(name, "trusted", "must be true or false")
    cwd = table.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise _fail(name, "cwd", "must be a string")
    risks, timeouts = _tool_settings(name, table.get("tools") or {})
    sandbox = table.get("sandbox")
    if sandbox is not None and sandbox not in SANDBOX_PROFILES:
        raise _fail(name, "sandbox", f"must be one of {', '.join(SANDBOX_PROFILES)}")
    if sandbox is not None and url:
        raise _fail(name, "sandbox", "applies to stdio servers (a command), not to a url")
    dirs = _strings(name, "dirs", table.get("dirs"))
    transport = table.get("transport")
    if transport is not None and not url:
        raise _fail(name, "transport", "applies to a server reached by url, not to a command")
    if transport is not None and transport not in HTTP_TRANSPORTS:
        raise _fail(name, "transport", 'must be "http" (streamable) or "sse" (legacy)')
    oauth = table.get("oauth", True)
    if not isinstance(oauth, bool):
        raise _fail(name, "oauth", "must be true or false")
    log_level = table.get("log_level", DEFAULT_LOG_LEVEL)
    if log_level not in (*LOG_LEVELS, "off"):
        raise _fail(name, "log_level", f"must be one of {', '.join(LOG_LEVELS)}, or off")
    return ServerConfig(
        name=name,
        command=command,
        args=_strings(name, "args", table.get("args")),
        cwd=cwd,
        env=env,
        url=url,
        headers=dict(headers),
        trusted=trusted,
        start_timeout=timeout,
        tool_timeout=tool_timeout,
        tool_risks=risks,
        tool_timeouts=timeouts,
        sandbox=sandbox,
        dirs=dirs,
        http_transport=HTTP_TRANSPORTS.get(transport) if transport else None,
        oauth=oauth,
        log_level=log_level,
    )


def _tool_settings(name: str, tools: Any) -> tuple[dict[str, str], dict[str, float]]:
    """`[mcp.servers.NAME.tools.TOOL]`: each tool's `risk` and `timeout`."""
    if not isinstance(tools, dict):
        raise _fail(name, "tools", "must be a table of tools: [mcp.servers.NAME.tools.TOOL]")
    risks: dict[str, str] = {}
    timeouts: dict[str, float] = {}
    for tool, settings in tools.items():
        unknown = set(settings) - {"risk", "timeout"} if isinstance(settings, dict) else None
        if not settings or unknown is None or unknown:
            raise _fail(name, f"tools.{tool}", "may set risk = low|medium|high and timeout")
        if "risk" in settings:
            if settings["risk"] not in RISK_LABELS:
                raise _fail(name, f"tools.{tool}.risk", "must be low, medium or high")
            risks[tool] = settings["risk"]
        if "timeout" in settings:
            where = f"{name}.tools.{tool}"
            timeouts[tool] = _seconds(where, "timeout", settings, 0, MAX_TOOL_TIMEOUT)
    return risks, timeouts


def servers_of(config: Any) -> list[ServerConfig]:
    """The servers the configuration declares (an untrusted project's were already left
    out when the configuration was read), in name order."""
    servers = config.table("mcp").get("servers") or {}
    if not isinstance(servers, dict):
        raise ConfigError(
            f"{_where(config, 'mcp.servers')}mcp.servers must be a table of servers: "
            "[mcp.servers.NAME]"
        )
    parsed = []
    for name in sorted(servers):
        try:
            parsed.append(parse_server(name, servers[name]))
        except ConfigError as error:  # named with its file and line, as every other key is
            key = getattr(error, "key", f"mcp.servers.{name}")
            raise ConfigError(f"{_where(config, key)}{error}") from None
    return parsed


def _where(config: Any, key: str) -> str:
    """`FILE, line N: ` of the layer that sets `key` (or the first key under it), as the
    configuration's own errors name it; "" when no file does."""
    from agentcli.config.files import line_of

    for layer in reversed(getattr(config, "layers", [])):
        found = [k for k in layer.values if k == key or k.startswith(key + ".")]
        if not found or layer.path is None:
            continue
        try:
            text = read_text(layer.path)
        except (OSError, UnicodeDecodeError):
            return f"{layer.path}: "
        number = line_of(text, found[0])
        return f"{layer.path}, line {number}: " if number else f"{layer.path}: "
    return ""


def ignored_servers(config: Any) -> list[str]:
    """Servers an untrusted project file declares: they wait until it is trusted."""
    names = {key.split(".")[2] for key in config.ignored if key.startswith("mcp.servers.")}
    return sorted(names)
