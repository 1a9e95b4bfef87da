"""Who chooses an MCP server's reach: the user. A stdio server runs in the profile its
table names, read-only when none is named, and is never tried in a wider one. What it then
fails to do is said in one line naming the setting that would let it — to the model (in
the call's result) and to the person (a warning) — when the sandbox explains the failure:
a path the server's layout hides or keeps read-only (EACCES, EROFS, EPERM, ENOENT), or the
network in a profile without it. `mcp add` suggests, and never applies, the profile a known
kind of server needs: a launcher that fetches the package at start (npx, uvx), a server
whose tools say they reach the open world."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Sequence
from typing import Any

from agentcli.mcp.config import (
    DEFAULT_LOG_LEVEL,
    DEFAULT_START_TIMEOUT,
    DEFAULT_TOOL_TIMEOUT,
    ServerConfig,
)
from agentcli.records import dataclass

# What a file system refusal looks like in the servers' words (Node's codes, Python's
# strerror, git's), and what a failed connection or name lookup does.
WRITE_REFUSED = re.compile(
    r"\b(EACCES|EROFS|EPERM)\b|permission denied|read-only file system|operation not permitted",
    re.IGNORECASE,
)
MISSING = re.compile(r"\bENOENT\b|no such file or directory", re.IGNORECASE)
NO_NETWORK = re.compile(
    r"\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH)\b|connection refused"
    r"|connection issue|connecterror|failed to establish a new connection|fetch failed"
    r"|name or service not known|temporary failure in name resolution|getaddrinfo"
    r"|network is unreachable|could not resolve host|nodename nor servname",
    re.IGNORECASE,
)
# A refusal (EACCES, EPERM) said of a connection: Landlock refuses connect(), the socket
# filter refuses socket().
ABOUT_NETWORK = re.compile(
    r"connect|socket|network|\breach|https?:|\bdns\b|resolv|fetch|\burl\b", re.IGNORECASE
)
PATH = re.compile(r"(?<![\w.~/:-])(/[^\s'\"`<>|;,(){}\[\]]+)")
# Launchers that fetch the server's package when it starts: the network and their cache.
LAUNCHERS = {
    "npx": "~/.npm",
    "bunx": "~/.bun/install/cache",
    "pnpx": "~/.local/share/pnpm",
    "uvx": "~/.cache/uv",
    "pipx": "~/.local/pipx",
}


@dataclass(frozen=True, slots=True)
class Reach:
    """What one sandboxed server reaches (agentcli.sandbox.layout.Layout's paths)."""

    profile: str
    read: tuple[str, ...]
    write: tuple[str, ...]
    protected: tuple[str, ...]
    network: bool
    workspace: str
    home: str = ""

    @classmethod
    def of(cls, profile: str, layout: Any, home: str = "") -> Reach:
        return cls(
            profile,
            tuple(layout.read),
            tuple(layout.write),
            tuple(layout.protected),
            bool(layout.network),
            layout.workspace,
            home,
        )

    def sees(self, path: str) -> bool:
        return any(_within(path, root) for root in (*self.read, *self.write))

    def writes(self, path: str) -> bool:
        if any(_within(path, kept) for kept in self.protected):
            return False
        return any(_within(path, root) for root in self.write)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def add_command(
    config: ServerConfig, *, sandbox: str | None = None, dirs: Sequence[str] = ()
) -> str:
    """The `agentcli mcp add` that writes this server's table again with a wider reach."""
    words = ["agentcli", "mcp", "add", config.name]
    for name in config.env:
        words += ["--env", name]
    if config.trusted:
        words.append("--trusted")
    chosen = sandbox or config.sandbox
    if chosen:
        words += ["--sandbox", chosen]
    for place in (*config.dirs, *dirs):
        words += ["--dir", place]
    return shlex.join([*words, "--", config.command or "", *config.args])


def _add_writes_it_all(config: ServerConfig) -> bool:
    """Whether `mcp add` can write this table again whole (it replaces the table): not
    when it holds what add has no option for."""
    return not (
        config.cwd
        or config.tool_risks
        or config.tool_timeouts
        or config.start_timeout != DEFAULT_START_TIMEOUT
        or config.tool_timeout != DEFAULT_TOOL_TIMEOUT
        or config.log_level != DEFAULT_LOG_LEVEL
    )


def change_command(
    config: ServerConfig, *, sandbox: str | None = None, dirs: Sequence[str] = ()
) -> str:
    """The command that makes the change: `mcp add` again when it keeps the whole table,
    else `config set` of the one key."""
    if _add_writes_it_all(config):
        return add_command(config, sandbox=sandbox, dirs=dirs)
    key = f"mcp.servers.{config.name}"
    if sandbox:
        return shlex.join(["agentcli", "config", "set", f"{key}.sandbox", sandbox])
    listed = "[" + ", ".join(f'"{d}"' for d in (*config.dirs, *dirs)) + "]"
    return shlex.join(["agentcli", "config", "set", f"{key}.dirs", listed])


def _setting(config: ServerConfig, *, sandbox: str | None = None, dirs: Sequence[str] = ()) -> str:
    key = f"mcp.servers.{config.name}"
    said = []
    if sandbox:
        said.append(f'{key}.sandbox = "{sandbox}"')
    if dirs:
        listed = ", ".join(f'"{d}"' for d in (*config.dirs, *dirs))
        said.append(f"{key}.dirs = [{listed}]")
    if sandbox and dirs and not _add_writes_it_all(config):
        return " and ".join(said)  # two keys: `config set` takes one at a time
    return " and ".join(said) + f" (or: {change_command(config, sandbox=sandbox, dirs=dirs)})"


def _paths(text: str, args: Any, cwd: str) -> tuple[list[str], list[str]]:
    """The absolute paths the error names, and the call's string arguments that are paths
    (relative ones from the server's working directory)."""
    named = [match.rstrip(".:'") for match in PATH.findall(text)]
    given = [
        os.path.join(cwd, os.path.expanduser(value))
        for value in _strings(args)
        if value.startswith(("/", "~/", "./", "../")) or (os.sep in value and "://" not in value)
    ]
    return _resolved(named), _resolved(given)


def _resolved(paths: list[str]) -> list[str]:
    return list(dict.fromkeys(os.path.realpath(p) for p in paths if p))


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _existing_ancestor(path: str) -> str:
    while not os.path.lexists(path) and path not in ("/", ""):
        path = os.path.dirname(path)
    return path or "/"


def _secret(path: str, reach: Reach) -> bool:
    from agentcli.sandbox.boundary import own_directories
    from agentcli.sandbox.layout import exposable, secret_places

    return not exposable(path, reach.home, secret_places(reach.home, own_directories()))


def _about_path(config: ServerConfig, reach: Reach, path: str, refused: bool) -> str | None:
    """Why the sandbox kept `path` from the server, and the setting that would let it."""
    anchor = _existing_ancestor(path)
    exists = anchor == path
    directory = anchor if os.path.isdir(anchor) else os.path.dirname(anchor)
    runs = f"MCP server {config.name} runs in the {reach.profile} sandbox"
    if not reach.sees(anchor):
        if _secret(directory, reach):
            return f"{runs}, which keeps {path} from every server (the home or a place of secrets)"
        place = f"{directory}:ro" if exists else directory  # reading it, or making it
        return (
            f"{runs}, which hides {path}; to let it reach there: {_setting(config, dirs=[place])}"
        )
    if not refused or reach.writes(path if exists else anchor):
        return None
    if any(_within(path, kept) for kept in reach.protected):
        return (
            f"{runs}, which keeps {path} read-only: it is what git or agentcli follow, which "
            "no sandboxed server writes; make that change yourself"
        )
    if _within(path, reach.workspace):
        fix = _setting(config, sandbox="workspace-write")
        return f"{runs}, which does not write the workspace ({path}); to let it: {fix}"
    fix = _setting(config, dirs=[directory])
    return f"{runs}, which keeps {path} read-only; to let it write there: {fix}"


def call_hint(config: ServerConfig, reach: Reach | None, text: str, args: Any, cwd: str) -> str:
    """One line for a failed call that the sandbox explains; "" when it does not."""
    if reach is None:
        return ""
    offline = (
        f"MCP server {config.name} runs in the {reach.profile} sandbox, which has no "
        f"network; to give it the network: {_setting(config, sandbox='network')}"
    )
    if not reach.network and NO_NETWORK.search(text):
        return offline
    named, given = _paths(text, args, cwd)
    for path in (*named, *given):  # there, but not to the server: whatever its words
        if os.path.exists(path) and not reach.sees(path):
            return _about_path(config, reach, path, refused=False) or ""
    refused, missing = bool(WRITE_REFUSED.search(text)), bool(MISSING.search(text))
    if not (refused or missing):
        return ""
    for path in named:
        if said := _about_path(config, reach, path, refused):
            return said
    if refused and not reach.network and ABOUT_NETWORK.search(text):
        return offline
    for path in given:
        if said := _about_path(config, reach, path, refused):
            return said
    if refused and reach.profile == "read-only":
        return (
            f"MCP server {config.name} runs in the read-only sandbox, which may be why it was "
            f"refused; to let it write the workspace: {_setting(config, sandbox='workspace-write')}"
        )
    return ""


def start_hint(config: ServerConfig, reach: Reach | None, text: str, cwd: str) -> str:
    """What to change when a sandboxed server did not start: what a launcher needs, else
    what its error or stderr says the sandbox kept from it, else the settings."""
    if reach is None or reach.profile not in ("read-only", "workspace-write"):
        return ""
    launcher = launcher_needs(config.command or "")
    if launcher and not reach.network:
        setting = _setting(config, sandbox="network", dirs=[launcher])
        return (
            f"{os.path.basename(config.command or '')} fetches the server's package when it "
            f"starts, which needs the network and its cache: {setting}"
        )
    said = call_hint(config, reach, text, [], cwd)  # (its arguments name its own files)
    if said:
        return said
    wider = "workspace-write" if reach.profile == "read-only" else "network"
    key = f"mcp.servers.{config.name}"
    return (
        f"it ran in the {reach.profile} sandbox; if it needs more, give it that: "
        f'{key}.sandbox = "{wider}" or "network", or places with {key}.dirs = ["DIR"] '
        f"(or: {change_command(config, sandbox=wider)})"
    )


def launcher_needs(command: str) -> str:
    """The cache of a launcher that fetches packages at start ("" for any other program)."""
    return LAUNCHERS.get(os.path.basename(command), "")


def add_suggestions(config: ServerConfig, open_world: Sequence[str] = ()) -> list[str]:
    """For `mcp add` with no --sandbox: the profile a known kind of server needs, as a
    suggestion (nothing is applied). `open_world`: its tools that say openWorldHint."""
    lines = []
    cache = launcher_needs(config.command or "")
    if cache:
        lines.append(
            f"suggestion: {os.path.basename(config.command or '')} fetches the server's package "
            f"when it starts, which needs the network and its cache; if you want that: "
            f"{_setting(config, sandbox='network', dirs=[cache])}"
        )
    elif open_world:
        tools = ", ".join(open_world)
        lines.append(
            f"suggestion: its tools that say they reach the open world (openWorldHint: {tools}) "
            f"have no network read-only; if you want them to: "
            f"{_setting(config, sandbox='network')}"
        )
    return lines
