"""Subagent definitions: a Markdown file whose front matter names a helper agent and says
when to use it, and whose body is that agent's system prompt. The model hands one a
sub-task through the `task` tool; it runs with a context of its own and the tools its
definition names (never more than the session's).

Read as Claude Code writes them (`.claude/agents/*.md`: `name`, `description`, `tools`
comma-separated, `disallowedTools`, `model`, `maxTurns`) and as opencode does
(`.opencode/agent/*.md`: the file's name, `description`, `mode`, `tools` as a mapping of
names to true or false, `model` as `provider/model`). A file that cannot be used is skipped
with one line saying why."""

from __future__ import annotations

import re
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
from agentcli.habits.places import AGENT_FOLDERS, LOOPED, Folder, folders, habit_files
from agentcli.habits.skills import Skipped
from agentcli.records import dataclass, field

NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_NAME, MAX_DESCRIPTION = 64, 1024
MAX_BYTES = 256 * 1024  # of one definition
MAX_FILES = 200  # definitions looked at in one folder
MAX_STEPS = 1000
GENERAL = "general-purpose"
# Claude Code's model names: its own aliases, which mean the session's model here.
INHERITED_MODELS = frozenset({"inherit", "sonnet", "opus", "haiku"})
# opencode's tool names, as agentcli names the same tools.
OPENCODE_TOOLS = {
    "bash": "run_shell",
    "read": "read_file",
    "write": "write_file",
    "edit": "edit_file",
    "patch": "edit_file",
    "grep": "search_content",
    "glob": "search_files",
    "list": "list_directory",
    "webfetch": "fetch_url",
}


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    description: str
    prompt: str  # its system prompt (the file's body)
    origin: str  # the folder it was found in, as a listing shows it; "built in"
    tools: tuple[str, ...] | None = None  # rules or another shell's names; None: all
    disallowed: tuple[str, ...] = ()  # names taken away from what `tools` leaves
    model: str | None = None  # what --model takes; None: the session's
    max_steps: int | None = None  # its own step limit, within the run's


GENERAL_PURPOSE = Definition(
    name=GENERAL,
    description=(
        "A general-purpose agent for research and multi-step tasks: searching the code, "
        "reading many files, trying things out. It has the session's tools; use it to keep "
        "a long search out of this conversation."
    ),
    prompt=(
        "You are a subagent: another agent gave you one task. Do it with the tools you "
        "have, then answer with what you found or did, completely and concisely: your "
        "final answer is all the other agent sees."
    ),
    origin="built in",
)


@dataclass(slots=True)
class Subagents:
    found: dict[str, Definition] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    untrusted: list[str] = field(default_factory=list)  # project folders not read

    def named(self, name: str) -> Definition | None:
        return self.found.get(name)


def find_subagents(workspace: Path, trusted: bool) -> Subagents:
    """Every definition in the project's folders (when `trusted`) and the user's, then the
    built-in general-purpose one (unless a file defines that name). A name found twice is
    the first one's."""
    where = folders(AGENT_FOLDERS, workspace, trusted)
    agents = Subagents(untrusted=where.untrusted)
    for folder in where.found:
        walked = habit_files(folder.path, ".md", depth=2, limit=MAX_FILES)
        for loop in walked.looped:
            shown = f"{folder.label}/{loop.relative_to(folder.path).as_posix()}"
            agents.skipped.append(Skipped(shown, LOOPED))
        for path in walked.files:
            shown = f"{folder.label}/{path.relative_to(folder.path).as_posix()}"
            try:
                definition = read_definition(path, folder)
            except FrontMatterError as problem:
                agents.skipped.append(Skipped(shown, str(problem)))
                continue
            if definition is None:
                continue
            first = agents.found.get(definition.name)
            if first is not None:
                why = f"the subagent {definition.name} from {first.origin} is used instead"
                agents.skipped.append(Skipped(shown, why, definition.name))
            else:
                agents.found[definition.name] = definition
    agents.found.setdefault(GENERAL, GENERAL_PURPOSE)
    return agents


def read_definition(path: Path, folder: Folder) -> Definition | None:
    """The definition `path` holds; None for a file that is no subagent (opencode's
    primary agents, Claude Code's `disabled: true`). Raises FrontMatterError."""
    fields, body = split_front_matter(read_habit_file(path, MAX_BYTES), required=True)
    if fields.get("disabled") is True:
        return None
    mode = text_field(fields, "mode")
    if mode == "primary":
        return None  # opencode's agent for the main conversation, not a subagent
    name = text_field(fields, "name") or path.name.removesuffix(".md")
    if len(name) > MAX_NAME or not NAME.fullmatch(name):
        raise FrontMatterError(
            f"name {name!r} must be lowercase letters, digits and single hyphens between "
            f"them, at most {MAX_NAME} characters"
        )
    description = text_field(fields, "description", limit=MAX_DESCRIPTION)
    if not description:
        raise FrontMatterError("it has no description (the model picks a subagent by it)")
    tools, disallowed = _tools(fields)
    return Definition(
        name=name,
        description=description,
        prompt=body.strip(),
        origin=folder.label,
        tools=tools,
        disallowed=disallowed,
        model=_model(model_field(fields)),
        max_steps=_steps(fields),
    )


def _tools(fields: dict[str, Any]) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """(what it may use, None for all; what is taken away): Claude Code's `tools` and
    `disallowedTools`, or opencode's mapping of names to true or false."""
    value = fields.get("tools")
    disallowed = word_list(fields, "disallowedTools")
    if isinstance(value, dict):  # opencode: a tool set to false is taken away
        for key, enabled in value.items():
            if not isinstance(enabled, bool):
                raise FrontMatterError(f"tools.{key} must be true or false")
            if not enabled:
                disallowed.append(OPENCODE_TOOLS.get(key, key))
        return None, tuple(disallowed)
    if value is None:
        return None, tuple(disallowed)
    return tuple(word_list(fields, "tools")), tuple(disallowed)


def _model(value: str | None) -> str | None:
    """What --model takes, or None for the session's model (`inherit`, and the aliases of
    Claude Code's own models); opencode's `provider/model` is agentcli's `provider:model`."""
    if not value or value in INHERITED_MODELS:
        return None
    if ":" not in value and "/" in value:
        provider, _, model = value.partition("/")
        return f"{provider}:{model}"
    return value


def _steps(fields: dict[str, Any]) -> int | None:
    for key in ("max-steps", "maxTurns"):
        value = fields.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_STEPS:
            raise FrontMatterError(f"{key} must be a whole number from 1 to {MAX_STEPS}")
        return value
    return None
