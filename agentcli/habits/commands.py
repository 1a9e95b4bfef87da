"""Custom slash commands: a Markdown file (`.agentcli/commands/review.md`, Claude Code's
`.claude/commands/*.md`) or a Gemini CLI TOML file (`.gemini/commands/*.toml`) whose text is
sent as the prompt when the user types `/review ARGS`; a subfolder is a namespace
(`git/commit.md` is `/git:commit`).

Markdown front matter: `description`, `argument-hint`, `model` (that turn's model),
`allowed-tools` (what may run during that turn: it narrows, never widens). In the text,
`$ARGUMENTS` is everything after the name and `$1`…`$9` its words; text without either gets
the arguments appended. TOML: `prompt` and `description`, `{{args}}` for the arguments.
Neither form runs anything while the prompt is made (Claude Code's !`cmd` and Gemini's
!{cmd}): what runs, runs as the model's tool calls, under the policy."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from agentcli.habits.front_matter import (
    FrontMatterError,
    model_field,
    read_habit_file,
    split_front_matter,
    text_field,
    word_list,
)
from agentcli.habits.places import COMMAND_FOLDERS, LOOPED, Folder, folders, habit_files
from agentcli.habits.skills import Skipped
from agentcli.records import dataclass, field

MAX_BYTES = 256 * 1024  # of one command file
MAX_FILES = 1000  # command files looked at in one folder, subfolders included
MAX_DEPTH = 4  # namespaces: `a:b:c:name` at most
PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
PLACEHOLDER = re.compile(r"\$ARGUMENTS|\$([1-9])(?!\d)")
GEMINI_SHELL = "!{"

# Claude Code's tool names, as agentcli names the same tools (allowed-tools).
PEER_TOOLS = {
    "Bash": "run_shell",
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "Glob": "search_files",
    "Grep": "search_content",
    "LS": "list_directory",
    "WebFetch": "fetch_url",
    "WebSearch": "web_search",
}


@dataclass(frozen=True, slots=True)
class CustomCommand:
    name: str  # `git:commit`
    template: str
    origin: str  # the folder it was found in, as a listing shows it
    gemini: bool = False  # a TOML file: `{{args}}`
    description: str = ""
    argument_hint: str = ""
    model: str | None = None
    allowed_tools: tuple[str, ...] | None = None  # None: not narrowed

    def describe(self) -> str:
        """Its one line in /help and Tab's list."""
        said = self.description or "(a custom command)"
        return f"{said} {self.argument_hint}".strip()


@dataclass(slots=True)
class Commands:
    found: dict[str, CustomCommand] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    untrusted: list[str] = field(default_factory=list)  # project folders not read

    def why_not(self, name: str) -> str | None:
        """Why there is no command `name` though a file would make one: one line."""
        skipped = next((s for s in self.skipped if s.name == name), None)
        return f"{skipped.path}: {skipped.why}" if skipped is not None else None


def find_commands(workspace: Path, trusted: bool, reserved: frozenset[str]) -> Commands:
    """Every command file in the project's folders (when `trusted`) and the user's; a name
    found twice is the first one's, and a built-in command's name (`reserved`) is the
    built-in's."""
    where = folders(COMMAND_FOLDERS, workspace, trusted)
    commands = Commands(untrusted=where.untrusted)
    for folder in where.found:
        gemini = ".gemini" in folder.path.parts
        walked = habit_files(
            folder.path, ".toml" if gemini else ".md", depth=MAX_DEPTH, limit=MAX_FILES
        )
        for loop in walked.looped:
            shown = f"{folder.label}/{loop.relative_to(folder.path).as_posix()}"
            commands.skipped.append(Skipped(shown, LOOPED))
        for path in walked.files:
            parts = path.relative_to(folder.path).parts
            shown = f"{folder.label}/{'/'.join(parts)}"
            name = ""
            try:
                name = command_name(parts)
                command = _load(path, name, folder, gemini)
            except FrontMatterError as problem:
                commands.skipped.append(Skipped(shown, str(problem), name))
                continue
            first = commands.found.get(command.name)
            if command.name in reserved or command.name.startswith("mcp__"):
                why = f"/{command.name} is agentcli's own command; rename the file"
                commands.skipped.append(Skipped(shown, why, command.name))
            elif first is not None:
                why = f"/{command.name} from {first.origin} is used instead"
                commands.skipped.append(Skipped(shown, why))
            else:
                commands.found[command.name] = command
    return commands


def command_name(parts: tuple[str, ...]) -> str:
    """`git/commit.md` → `git:commit`."""
    *spaces, file_name = parts
    words = [*spaces, file_name.rsplit(".", 1)[0]]
    if not all(PART.fullmatch(word) for word in words):
        raise FrontMatterError(
            "its name is not a command's: letters, digits, - _ and . in each part of it"
        )
    return ":".join(words)


def _load(path: Path, name: str, folder: Folder, gemini: bool) -> CustomCommand:
    text = read_habit_file(path, MAX_BYTES)
    if gemini:
        return _from_toml(name, text, folder)
    fields, body = split_front_matter(text, required=False)
    tools = word_list(fields, "allowed-tools") if "allowed-tools" in fields else None
    return CustomCommand(
        name=name,
        template=body,
        origin=folder.label,
        description=text_field(fields, "description", limit=1024) or "",
        argument_hint=_hint(fields.get("argument-hint")),
        model=model_field(fields),
        allowed_tools=tuple(tools) if tools is not None else None,
    )


def _hint(value: Any) -> str:
    """`argument-hint`: text; a YAML list (`[message]` unquoted) is shown as it was written."""
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(f"[{item}]" for item in value)
    if not isinstance(value, str):
        raise FrontMatterError("argument-hint must be text (quote it)")
    return value.strip()


def _from_toml(name: str, text: str, folder: Folder) -> CustomCommand:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise FrontMatterError(f"it is not valid TOML ({error})") from None
    except RecursionError:  # tomllib reads nested arrays by recursion
        raise FrontMatterError("its TOML nests arrays or tables too deeply to read") from None
    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise FrontMatterError('it has no prompt (prompt = "...")')
    if GEMINI_SHELL in prompt:
        raise FrontMatterError(
            "its prompt runs a shell command as it is made (!{...}), which agentcli does not "
            "do: the model can run it with run_shell, under the policy"
        )
    description = data.get("description", "")
    if not isinstance(description, str):
        raise FrontMatterError("description must be text")
    return CustomCommand(name, prompt, folder.label, gemini=True, description=description.strip())


# --- using one


@dataclass(frozen=True, slots=True)
class Expansion:
    text: str  # the prompt sent
    model: str | None
    rules: list[Any] | None  # agentcli.policy.rules.Rule: what may run; None: not narrowed
    unknown: list[str]  # allowed-tools names no agentcli tool answers to


def command_turn(commands: Commands, name: str, arguments: str) -> Expansion | None:
    """What `/name ARGUMENTS` sends, or None when no file defines `name`. A file skipped,
    or an allowed-tools entry that is no rule, is one UsageError line naming it."""
    from agentcli.errors import UsageError
    from agentcli.output.visible import visible

    command = commands.found.get(name)
    if command is None:
        why = commands.why_not(name)
        if why is not None:
            raise UsageError(f"/{name} was skipped: {visible(why)}")
        return None
    try:
        return expand(command, arguments)
    except FrontMatterError as problem:
        raise UsageError(f"/{name} ({visible(command.origin)}): {problem}") from None


def unknown_tools_note(name: str, expansion: Expansion) -> str | None:
    """The line saying which allowed-tools entries name tools agentcli does not have."""
    if not expansion.unknown:
        return None
    from agentcli.output.visible import visible

    names = ", ".join(visible(entry) for entry in expansion.unknown)
    return f"/{name}: allowed-tools names {names}, which agentcli does not have"


def expand(command: CustomCommand, arguments: str) -> Expansion:
    """The prompt `/name ARGUMENTS` sends, with the turn's model and narrowed tools. Raises
    FrontMatterError for an allowed-tools entry that is not a rule."""
    arguments = arguments.strip()
    if command.gemini:
        text = _gemini_text(command.template, arguments)
    else:
        text = _markdown_text(command.template, arguments)
    rules, unknown = tool_rules(command.allowed_tools)
    return Expansion(text.strip(), command.model, rules, unknown)


def _markdown_text(template: str, arguments: str) -> str:
    """One pass, so that an argument holding `$1` or `$ARGUMENTS` stays as typed."""
    words = _words(arguments)

    def value(match: re.Match[str]) -> str:
        if match.group(1) is None:
            return arguments
        number = int(match.group(1))
        return words[number - 1] if number <= len(words) else ""

    text, count = PLACEHOLDER.subn(value, template)
    if arguments and not count:
        text = f"{text.rstrip()}\n\nARGUMENTS: {arguments}"
    return text


def _gemini_text(template: str, arguments: str) -> str:
    text = re.sub(r"@\{([^\s{}]+)\}", r"@\1", template)  # Gemini's file injection: a mention
    if "{{args}}" in text:
        return text.replace("{{args}}", arguments)
    return f"{text.rstrip()}\n\n{arguments}" if arguments else text


def _words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: words as typed
        return arguments.split()


def tool_rules(entries: tuple[str, ...] | None) -> tuple[list[Any] | None, list[str]]:
    """allowed-tools as policy rules (Claude Code's `Bash(git add:*)` is
    `run_shell(git add *)`), and the names agentcli has no tool for."""
    if entries is None:
        return None, []
    from agentcli.errors import ConfigError
    from agentcli.policy.rules import parse_rule

    rules, unknown = [], []
    for entry in entries:
        translated = _as_agentcli(entry)
        if translated is None:
            unknown.append(entry)
            continue
        try:
            rules.append(parse_rule(translated, "allowed-tools"))
        except ConfigError as error:
            raise FrontMatterError(str(error)) from None
    return rules, unknown


def _as_agentcli(entry: str) -> str | None:
    """One allowed-tools entry in agentcli's rule syntax; None for a tool of another shell
    that agentcli does not have (Task, TodoWrite)."""
    tool, paren, rest = entry.partition("(")
    tool = tool.strip()
    if tool not in PEER_TOOLS:
        # agentcli's names are lowercase (run_shell, mcp__srv__*); a capitalised one is
        # another shell's tool that agentcli does not have.
        return None if tool[:1].isupper() else entry
    ours = PEER_TOOLS[tool]
    if not paren:
        return ours
    pattern = rest.removesuffix(")").strip()
    if ours == "run_shell":
        pattern = re.sub(r":\*$", " *", pattern)  # Claude Code's prefix form
    elif pattern.startswith("//"):
        pattern = pattern[1:]  # Claude Code's absolute path
    return f"{ours}({pattern})"
