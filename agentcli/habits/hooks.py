"""The user's hooks: programs run on a session's events, read from agentcli's configuration
(`[[hooks.PreToolUse]]` in the user's config.toml, the project's once the workspace is
trusted) and from Claude Code's settings files as it wrote them (`~/.claude/settings.json`,
and a trusted project's `.claude/settings.json` and `.claude/settings.local.json`).

The layout is Claude Code's: under each event name a list of groups, each a `matcher` and
its `hooks` (`{type = "command", command, timeout}`); agentcli's TOML also takes a group's
one `command` (and `timeout`) without the inner list. A tool event's matcher is written in
the policy's own rule syntax (`run_shell(git push *)`, `write_file(src/**)`,
`mcp__srv__*`) or with Claude Code's tool names (`Bash`, `Edit|Write`), which are the same
rules (agentcli.habits.commands.tool_rules); alternatives are separated by `|`."""

from __future__ import annotations

import contextlib
import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.errors import ConfigError
from agentcli.records import dataclass, field
from agentcli.regular_files import read_text

if TYPE_CHECKING:
    from agentcli.config.resolve import Config
    from agentcli.policy.rules import Rule
    from agentcli.risk import Subjects

TOOL_EVENTS = ("PreToolUse", "PostToolUse")
EVENTS = (
    *TOOL_EVENTS,
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
)
DEFAULT_TIMEOUT = 60.0  # seconds, as Claude Code's
MAX_TIMEOUT = 3600.0
PEER_USER_FILE = "~/.claude/settings.json"
PEER_PROJECT_FILES = (".claude/settings.json", ".claude/settings.local.json")


@dataclass(frozen=True, slots=True)
class Hook:
    event: str
    command: str  # run by the shell, in the workspace
    origin: str  # the file it came from, as a listing shows it
    matcher: str = ""  # as written; "" or "*": every tool (every kind of the event)
    rules: tuple[Rule, ...] | None = None  # a tool event's matcher as rules; None: every tool
    timeout: float = DEFAULT_TIMEOUT
    unknown: tuple[str, ...] = ()  # matcher names of another shell's tools agentcli lacks
    unloaded: str | None = None  # why its group could not be read: a guard that refuses

    def applies(self, tool: str, subjects: Subjects, root: Path) -> bool:
        """A tool event's hook runs for every call one of its rules may match, as a deny
        rule would (`run_shell(rm *)` sees `sudo rm` and `bash -c 'rm x'` too)."""
        from agentcli.policy.rules import matches_any

        if self.rules is None:
            return True
        return any(matches_any(rule, tool, subjects, root) for rule in self.rules)

    def applies_to_kind(self, kind: str) -> bool:
        """Another event's matcher names its kinds: SessionStart's source (`startup`,
        `resume`), PreCompact's trigger (`manual`, `auto`), Notification's type."""
        words = [w.strip() for w in self.matcher.split("|") if w.strip()]
        return not words or "*" in words or kind in words


@dataclass(slots=True)
class Hooks:
    found: list[Hook] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # one line each: file and why
    untrusted: list[str] = field(default_factory=list)  # the project's, not read

    def of(self, event: str) -> list[Hook]:
        return [hook for hook in self.found if hook.event == event]


def find_hooks(config: Config, workspace: Path, trusted: bool) -> Hooks:
    """agentcli's hooks (a mistake in them stops the run: a guard that silently did not
    load would let through what it guards), then Claude Code's (a group agentcli cannot
    read is skipped, saying why, and the rest run)."""
    hooks = Hooks()
    for layer in config.layers:
        if layer.name not in ("user", "project") or layer.path is None:
            continue
        origin = _shown(layer.path)
        for key, value in layer.values.items():
            if key == "hooks" or key.startswith("hooks."):
                hooks.found += _config_hooks(key, value, origin)
    if any(key.startswith("hooks.") for key in config.ignored):
        hooks.untrusted.append("[hooks] in .agentcli/config.toml")
    peers = [(Path(PEER_USER_FILE).expanduser(), _shown(Path(PEER_USER_FILE).expanduser()))]
    for name in PEER_PROJECT_FILES:
        path = workspace / name
        if not trusted:
            if _has_hooks(path):
                hooks.untrusted.append(name)
            continue
        peers.append((path, name))
    seen: set[Path] = set()
    for path, origin in peers:
        if path.resolve() in seen:
            continue  # the workspace is the home directory
        seen.add(path.resolve())
        _read_peer_file(path, origin, hooks)
    return hooks


def _config_hooks(key: str, value: Any, origin: str) -> list[Hook]:
    parts = key.split(".")
    if len(parts) != 2:
        event = parts[1] if len(parts) > 1 else "PreToolUse"
        raise ConfigError(
            f"{origin}: hooks are written as arrays of tables: [[hooks.{event}]] with "
            f"matcher and command (not {key})"
        )
    event = parts[1]
    if event not in EVENTS:
        raise ConfigError(f"{origin}: unknown hook event {event!r}; known: {', '.join(EVENTS)}")
    if not isinstance(value, list):
        raise ConfigError(f"{origin}: hooks.{event} must be a list: write [[hooks.{event}]]")
    found: list[Hook] = []
    for number, group in enumerate(value, start=1):
        try:
            found += _group(event, group, origin, toml=True)
        except _Unreadable as problem:
            raise ConfigError(f"{origin}: hooks.{event} #{number}: {problem}") from None
    return found


class _Unreadable(Exception):
    """A hook group agentcli cannot read: the message says what is wrong."""


def _group(event: str, group: Any, origin: str, *, toml: bool) -> list[Hook]:
    if not isinstance(group, dict):
        raise _Unreadable("each entry must be a table with matcher and hooks")
    matcher = group.get("matcher", "")
    if not isinstance(matcher, str):
        raise _Unreadable("matcher must be a string")
    rules, unknown = matcher_rules(matcher) if event in TOOL_EVENTS else (None, [])
    entries = group.get("hooks")
    if entries is None and toml and "command" in group:
        entries = [{k: v for k, v in group.items() if k != "matcher"}]
    if not isinstance(entries, list) or not entries:
        raise _Unreadable('a group needs hooks = [{ type = "command", command = "…" }]')
    found = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise _Unreadable("each hook must be a table with a command")
        kind = entry.get("type", "command")
        if kind != "command":
            raise _Unreadable(f"hooks of type {kind!r} are not run by agentcli (only commands)")
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            raise _Unreadable("a hook's command must be a non-empty string")
        found.append(
            Hook(
                event=event,
                command=command,
                origin=origin,
                matcher=matcher,
                rules=rules,
                timeout=_timeout(entry.get("timeout")),
                unknown=tuple(unknown),
            )
        )
    return found


def _unloaded_guard(group: Any, origin: str, number: int, problem: str) -> Hook:
    """A PreToolUse group agentcli cannot run (an `http` hook, a bad timeout): the calls
    it would have looked at are refused, saying why, not let through unchecked. Its
    matcher, when it can be read, says which; otherwise every call."""
    matcher = group.get("matcher", "") if isinstance(group, dict) else ""
    rules = None
    if isinstance(matcher, str):
        with contextlib.suppress(_Unreadable, ValueError):
            rules, _ = matcher_rules(matcher)
    return Hook(
        event="PreToolUse",
        command=f"{origin} PreToolUse #{number}",
        origin=origin,
        matcher=matcher if isinstance(matcher, str) and rules is not None else "",
        rules=rules,
        unloaded=problem,
    )


def _timeout(value: Any) -> float:
    if value is None:
        return DEFAULT_TIMEOUT
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or not value > 0 or not math.isfinite(value):  # no infinity: 1e309 is one
        raise _Unreadable(f"timeout must be a finite number of seconds above 0, not {value!r}")
    return min(float(value), MAX_TIMEOUT)


def matcher_rules(matcher: str) -> tuple[tuple[Rule, ...] | None, list[str]]:
    """A tool event's matcher as rules (None: every tool) and the names of other shells'
    tools it names that agentcli lacks (they match nothing)."""
    from agentcli.habits.commands import tool_rules
    from agentcli.habits.front_matter import FrontMatterError

    entries = [entry.strip() for entry in _alternatives(matcher)]
    entries = [entry for entry in entries if entry]
    if not entries or "*" in entries:
        return None, []
    # Claude Code's matcher is a regular expression: `mcp__srv__.*` is the glob mcp__srv__*.
    entries = [re.sub(r"^(mcp__[^(]*?)\.\*", r"\1*", entry) for entry in entries]
    try:
        rules, unknown = tool_rules(tuple(entries))
    except FrontMatterError as error:
        message = str(error).replace("(allowed-tools)", "(a hook's matcher)")
        raise _Unreadable(message) from None
    return tuple(rules or ()), unknown


def _alternatives(matcher: str) -> list[str]:
    """`Edit|Write` → two; a `|` inside a rule's parentheses (`run_shell(a | b)`) stays."""
    parts, depth, current = [], 0, []
    for char in matcher:
        depth += (char == "(") - (char == ")")
        if char == "|" and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _has_hooks(path: Path) -> bool:
    data = _load_json(path)
    return isinstance(data, dict) and bool(data.get("hooks"))


def _load_json(path: Path) -> Any:
    try:
        return json.loads(read_text(path))
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _read_peer_file(path: Path, origin: str, hooks: Hooks) -> None:
    if not path.is_file():
        return
    data = _load_json(path)
    if not isinstance(data, dict):
        hooks.skipped.append(f"{origin}: not a JSON object; its hooks are not run")
        return
    table = data.get("hooks")
    if table is None:
        return
    if data.get("disableAllHooks") is True:  # Claude Code's own switch, honoured here too
        hooks.skipped.append(f"{origin}: disableAllHooks is set; its hooks are not run")
        return
    if not isinstance(table, dict):
        hooks.skipped.append(f"{origin}: hooks must be an object of events; not run")
        return
    for event, groups in table.items():
        if event not in EVENTS:
            hooks.skipped.append(f"{origin}: {event} hooks are not run (agentcli has no {event})")
            continue
        for number, group in enumerate(groups if isinstance(groups, list) else [groups], 1):
            try:
                hooks.found += _group(event, group, origin, toml=False)
            except _Unreadable as problem:
                hooks.skipped.append(f"{origin}: {event} #{number} skipped: {problem}")
                if event == "PreToolUse":  # a guard that did not load: fail closed
                    hooks.found.append(_unloaded_guard(group, origin, number, str(problem)))


def _shown(path: Path) -> str:
    from agentcli.habits.places import shown

    return shown(path)
