"""Rules: `TOOL` or `TOOL(PATTERN)`, in allow, ask and deny lists.

For `run_shell` the pattern matches each simple command of the parsed command line: the
program and an argument prefix, with `*` as a wildcard inside a word and a final lone `*`
for "any further arguments" (`run_shell(git push *)`). For file tools the pattern is a glob
on the resolved path: relative patterns are matched against the path inside the workspace,
absolute ones against the absolute path, and `**` crosses directories. For other tools it
is a glob on the tool's main argument (a URL, say)."""

from __future__ import annotations

import functools
import re
import shlex
from fnmatch import fnmatchcase
from pathlib import Path

from agentcli.errors import ConfigError
from agentcli.policy.shell_parse import UNKNOWN, SimpleCommand
from agentcli.records import dataclass, field
from agentcli.risk import Subjects

_RULE = re.compile(r"^\s*([A-Za-z_][\w.*?-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
# Globs in the tool name only for MCP tools (`mcp__time__*`): never a rule for every tool.
MCP_PREFIX = "mcp__"


@dataclass(frozen=True, slots=True)
class Rule:
    tool: str
    pattern: str | None
    source: str = ""  # where it came from: a file, a flag, "session"

    @property
    def text(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"

    def __str__(self) -> str:
        return self.text

    def names(self, tool: str) -> bool:
        """Whether the rule is about this tool (its name, or a glob over MCP tool names)."""
        return self.tool == tool or (
            self.tool.startswith(MCP_PREFIX) and fnmatchcase(tool, self.tool)
        )


def parse_rule(text: str, source: str = "") -> Rule:
    match = _RULE.match(text)
    if match is None or (match.group(2) is not None and not match.group(2).strip()):
        raise ConfigError(
            f"bad rule {text!r} ({source or 'rule'}): write TOOL or TOOL(PATTERN), "
            "e.g. run_shell(git push *) or write_file(src/**)"
        )
    pattern = match.group(2).strip() if match.group(2) is not None else None
    if any(c in match.group(1) for c in "*?") and not match.group(1).startswith(MCP_PREFIX):
        raise ConfigError(
            f"bad rule {text!r} ({source or 'rule'}): a tool name may have * or ? only for "
            "MCP tools, e.g. mcp__time__*"
        )
    return Rule(match.group(1), pattern, source)


@functools.lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def path_matches(pattern: str, path: str, workspace: Path) -> bool:
    if pattern.startswith(("/", "~")):
        target = str(Path(pattern).expanduser()) if pattern.startswith("~") else pattern
        return bool(_glob_regex(target).match(path))
    try:
        relative = str(Path(path).relative_to(workspace))
    except ValueError:
        return False
    return bool(_glob_regex(pattern.removeprefix("./")).match(relative))


@functools.lru_cache(maxsize=512)
def _tokens(pattern: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(pattern))
    except ValueError:
        return tuple(pattern.split())


def _argv_matches(tokens: tuple[str, ...], argv: tuple[str, ...]) -> bool:
    """For allow rules: the command exactly as written."""
    if tokens and tokens[-1] == "*":
        prefix = tokens[:-1]
        return len(argv) >= len(prefix) and all(map(fnmatchcase, argv, prefix))
    return len(argv) == len(tokens) and all(map(fnmatchcase, argv, tokens))


def _argv_may_match(tokens: tuple[str, ...], argv: tuple[str, ...]) -> bool:
    """For deny and ask rules: the command as it may turn out. A word only the running
    shell decides (UNKNOWN: an expansion, a glob, a brace expansion) may become any words
    or none, so from there on anything matches."""
    every = bool(tokens) and tokens[-1] == "*"
    prefix = tokens[:-1] if every else tokens
    for position, token in enumerate(prefix):
        if position >= len(argv):
            return False
        if argv[position] == UNKNOWN:
            return True
        if not fnmatchcase(argv[position], token):
            return False
    rest = argv[len(prefix) :]
    return every or all(word == UNKNOWN for word in rest)


def command_matches(pattern: str, command: SimpleCommand) -> bool:
    """For deny and ask rules: the command, or any command it runs through a wrapper
    (`sudo rm`, `bash -c 'rm x'`, `find -exec rm`), matches; so does one that may run any
    program (agentcli.policy.runners)."""
    from agentcli.policy.wrappers import commands_within, late_words

    tokens = _tokens(pattern)
    within = commands_within(late_words(command))
    return within.hidden is not None or any(_argv_may_match(tokens, v) for v in within.commands)


def command_allowed_by(pattern: str, command: SimpleCommand) -> bool:
    """For allow rules: the command exactly as written matches, and no word the rule's
    wildcards cover runs a program: neither an option like `--receive-pack=PROG`
    (agentcli.policy.program_options), the word that makes a program run any other
    (a sed script with `e`: agentcli.policy.runners), nor any argument of a wrapper
    (`timeout *` does not allow `timeout 5 rm -rf x`), nor a glob that could expand into
    such an option. Only a rule that names such a word literally allows it."""
    from agentcli.policy.runners import hidden_in

    tokens = _tokens(pattern)
    if not (command.complete and _argv_matches(tokens, command.argv)):
        return False
    hidden = hidden_in(command.argv)
    blamed = {hidden.index} if hidden is not None and hidden.index is not None else set()
    return not any(
        i in blamed or _runs_something(command.argv, i) or _may_be_an_option(command, i)
        for i in range(1, len(command.argv))
        if not _literal_at(tokens, i)
    )


def _literal_at(tokens: tuple[str, ...], index: int) -> bool:
    """Whether the pattern names argv[index] literally (not by a wildcard)."""
    named = len(tokens) - 1 if tokens and tokens[-1] == "*" else len(tokens)
    return index < named and not any(c in tokens[index] for c in "*?[")


def _may_be_an_option(command: SimpleCommand, index: int) -> bool:
    """An unquoted glob that starts with a wildcard may expand into a file named like an
    option (`--receive-pack=x`)."""
    return command.has_glob[index] and command.argv[index][:1] in "*?["


def _runs_something(argv: tuple[str, ...], index: int) -> bool:
    from agentcli.policy.program_options import runs_program
    from agentcli.policy.wrappers import SHELLS, WRAPPERS

    program = argv[0].rsplit("/", 1)[-1]
    if index == 0:
        return False
    return (
        program in WRAPPERS or program in SHELLS or program == "eval" or runs_program(argv, index)
    )


@dataclass(slots=True)
class RuleSet:
    allow: list[Rule] = field(default_factory=list)
    ask: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)


def matches_any(rule: Rule, tool: str, subjects: Subjects, workspace: Path) -> bool:
    """For deny and ask rules: the rule applies if it matches any part of the call (deny
    must also see commands hidden inside substitutions)."""
    if not rule.names(tool):
        return False
    if rule.pattern is None:
        return True
    if subjects.kind == "command":
        return subjects.hidden is not None or any(
            command_matches(rule.pattern, c) for c in (*subjects.commands, *subjects.also)
        )
    if subjects.kind == "path":
        return any(path_matches(rule.pattern, v, workspace) for v in subjects.values)
    return any(fnmatchcase(v, rule.pattern) for v in subjects.values)


def _specific(pattern: str) -> bool:
    """A pattern whose first path component is literal names a place specifically."""
    first = pattern.removeprefix("./").lstrip("/").split("/", 1)[0]
    return bool(first) and not any(c in first for c in "*?[")


def covers(
    rule: Rule, tool: str, subjects: Subjects, workspace: Path, protected: bool = False
) -> bool:
    """For allow rules on paths and texts: every value must match. A protected call (outside
    the workspace, or a sensitive file) is covered only by a rule that names it specifically:
    `write_file` or `write_file(**)` never reaches .git/hooks or ~/.bashrc."""
    if not rule.names(tool):
        return False
    if rule.pattern is None:
        return not protected
    if protected and not _specific(rule.pattern):
        return False
    if subjects.kind == "path":
        return bool(subjects.values) and all(
            path_matches(rule.pattern, v, workspace) for v in subjects.values
        )
    if subjects.kind == "text":
        return bool(subjects.values) and all(fnmatchcase(v, rule.pattern) for v in subjects.values)
    return False


SUBCOMMAND_PROGRAMS = frozenset(
    {
        "git",
        "npm",
        "pnpm",
        "yarn",
        "npx",
        "cargo",
        "go",
        "docker",
        "kubectl",
        "pip",
        "uv",
        "poetry",
        "make",
        "just",
        "gh",
        "bun",
        "deno",
        "dotnet",
        "mvn",
        "gradle",
        "helm",
    }
)


def command_rule_pattern(command: SimpleCommand) -> str:
    """The structural rule offered when a command is approved for longer than once:
    `git push origin main` → `git push *`, `pytest -x tests` → `pytest *`."""
    from agentcli.policy.runners import runs_its_words
    from agentcli.policy.wrappers import SHELLS, WRAPPERS

    argv = command.argv
    if argv[0].rsplit("/", 1)[-1] in WRAPPERS | SHELLS | {"eval"} or runs_its_words(argv):
        # A wrapper runs its arguments, an interpreter or an editor what its words say:
        # only this very command.
        return shlex.join(argv)
    head = [argv[0]]
    if argv[0] in SUBCOMMAND_PROGRAMS and len(argv) > 1 and not argv[1].startswith("-"):
        head.append(argv[1])
    return shlex.join(head) + " *"
