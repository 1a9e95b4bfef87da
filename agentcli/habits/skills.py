"""Agent Skills (the open format of agentskills.io): a folder with a SKILL.md whose YAML
front matter names the skill and says when to use it, beside optional scripts/,
references/ and assets/. Only the names and descriptions go into the system prompt; the
model reads a SKILL.md and its files through the file tools when a task needs them
("progressive disclosure"), and runs its scripts through run_shell under the policy.

Each skill's folder is a read-only place of the boundary (agentcli.assembly.session adds
them to the sandbox): readable by tools and commands, never written by a tool. A folder
whose SKILL.md breaks the specification is skipped, with one line saying why."""

from __future__ import annotations

import html
import os
import re
from pathlib import Path
from typing import Any

from agentcli.habits.front_matter import FrontMatterError, split_front_matter, text_field, word_list
from agentcli.habits.places import SKILL_FOLDERS, Folder, folders
from agentcli.records import dataclass, field

FILE_NAME = "SKILL.md"
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_NAME, MAX_DESCRIPTION, MAX_COMPATIBILITY = 64, 1024, 500
MAX_BYTES = 256 * 1024  # of a SKILL.md read (its front matter is at the top)
MAX_ENTRIES = 1000  # folders looked at in one skills directory
MAX_LISTED = 100  # skills named in the system prompt
MENTION = re.compile(r"(?<![\w$/])\$([a-z0-9]+(?:-[a-z0-9]+)*)(?![\w-])")


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    folder: Path  # resolved: the read-only place
    origin: str  # the skills directory it was found in, as a listing shows it
    project: bool
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()  # shown, never pre-approved

    @property
    def file(self) -> Path:
        return self.folder / FILE_NAME


@dataclass(frozen=True, slots=True)
class Skipped:
    path: str  # as a listing shows it
    why: str
    name: str = ""  # a command's, when its file's name made one


@dataclass(slots=True)
class Skills:
    found: list[Skill] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    untrusted: list[str] = field(default_factory=list)  # project folders not read

    def named(self, name: str) -> Skill | None:
        return next((skill for skill in self.found if skill.name == name), None)


def find_skills(workspace: Path, trusted: bool) -> Skills:
    """Every skill in the project's folders (when `trusted`) and the user's; a name found
    twice is the first one's (the project's before the user's)."""
    where = folders(SKILL_FOLDERS, workspace, trusted)
    skills = Skills(untrusted=where.untrusted)
    for folder in where.found:
        for entry in _entries(folder.path):
            skill = read_skill(entry, folder, skills)
            if skill is not None:
                skills.found.append(skill)
    return skills


def _entries(directory: Path) -> list[Path]:
    try:
        names = sorted(os.listdir(directory))[:MAX_ENTRIES]
    except OSError:
        return []
    return [directory / name for name in names if not name.startswith(".")]


def read_skill(entry: Path, folder: Folder, skills: Skills) -> Skill | None:
    """The skill in `entry`, or None (a skip is recorded in `skills` with why)."""
    if not entry.is_dir():
        return None  # a file beside the skills: not one
    where = f"{folder.label}/{entry.name}"
    if not (entry / FILE_NAME).exists():
        skills.skipped.append(Skipped(where, f"no {FILE_NAME} in it"))
        return None
    try:
        skill = _load(entry, folder)
    except FrontMatterError as problem:
        skills.skipped.append(Skipped(f"{where}/{FILE_NAME}", str(problem)))
        return None
    first = skills.named(skill.name)
    if first is not None:
        why = f"{skill.name} from {first.origin} is used instead"
        skills.skipped.append(Skipped(f"{where}/{FILE_NAME}", why))
        return None
    return skill


def _load(entry: Path, folder: Folder) -> Skill:
    from agentcli.workspace.safe_open import read_regular

    real = Path(os.path.realpath(entry))
    why = unsafe_place(str(real))
    if why is not None:
        raise FrontMatterError(why)
    try:
        data = read_regular(real / FILE_NAME, real, MAX_BYTES)
    except OSError:
        raise FrontMatterError("it could not be read as a regular file (not a link)") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise FrontMatterError("it is not UTF-8 text") from None
    fields, _ = split_front_matter(text, required=True)
    return Skill(
        name=_name(fields, entry.name),
        description=_description(fields),
        folder=real,
        origin=folder.label,
        project=folder.project,
        license=text_field(fields, "license"),
        compatibility=text_field(fields, "compatibility", limit=MAX_COMPATIBILITY),
        metadata=_metadata(fields),
        allowed_tools=tuple(word_list(fields, "allowed-tools")),
    )


def _name(fields: dict[str, Any], folder_name: str) -> str:
    name = text_field(fields, "name")
    if not name:
        raise FrontMatterError("name is missing from its front matter")
    if len(name) > MAX_NAME or not NAME.fullmatch(name):
        raise FrontMatterError(
            f"name {name!r} must be lowercase letters, digits and single hyphens between "
            f"them, at most {MAX_NAME} characters"
        )
    if name != folder_name:
        raise FrontMatterError(f"name {name!r} is not its folder's name ({folder_name!r})")
    return name


def _description(fields: dict[str, Any]) -> str:
    description = text_field(fields, "description", limit=MAX_DESCRIPTION)
    if not description:
        raise FrontMatterError("description is missing from its front matter")
    return description


def _metadata(fields: dict[str, Any]) -> dict[str, str]:
    value = fields.get("metadata")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FrontMatterError("metadata must be a mapping (key: value)")
    return {str(key): str(item) for key, item in value.items()}


def unsafe_place(real: str) -> str | None:
    """Why a folder may not become a read-only place of the boundary: the home directory
    or one above it, a place of secrets (~/.ssh, ...) or one holding one, agentcli's data;
    of agentcli's configuration directory, only its skills/ may be read."""
    from agentcli.paths import cache_dir, config_dir, data_dir
    from agentcli.sandbox.layout import exposable, secret_places

    home = os.path.expanduser("~")
    secrets = secret_places(home, [data_dir(), cache_dir()])
    config = os.path.realpath(config_dir())
    inside_config = real == config or real.startswith(config.rstrip("/") + "/")
    allowed_there = real.startswith(os.path.join(config, "skills", ""))
    if real == "/" or not exposable(real, home, secrets) or (inside_config and not allowed_there):
        return f"its folder ({real}) holds or lies in a place of secrets; it is not read"
    if config.startswith(real.rstrip("/") + "/"):
        return f"its folder ({real}) holds agentcli's configuration; it is not read"
    return None


# --- what the model is told


def prompt_section(skills: Skills, workspace: Path) -> str:
    """The system prompt's part: what skills are, how to use one, and each skill's name,
    description and SKILL.md (the names and descriptions only: progressive disclosure)."""
    if not skills.found:
        return ""
    from agentcli.output.visible import visible

    lines = [
        "## Skills",
        "",
        "A skill is a folder of instructions (its SKILL.md), scripts and resources for one "
        "kind of task. When a task matches a skill's description, read its SKILL.md with "
        "read_file before you start and follow it; read the other files it names (paths in "
        "it are relative to its folder) the same way, and run its scripts with run_shell. "
        "A skill's folder is read-only. The user may mention a skill as $name.",
        "",
        "<available_skills>",
    ]
    for skill in skills.found[:MAX_LISTED]:
        lines += [
            "<skill>",
            f"<name>{skill.name}</name>",
            f"<description>{html.escape(visible(skill.description))}</description>",
            f"<location>{html.escape(location(skill, workspace))}</location>",
            "</skill>",
        ]
    lines.append("</available_skills>")
    more = len(skills.found) - MAX_LISTED
    if more > 0:
        lines.append(f"({more} more skills are installed but not listed here.)")
    return "\n".join(lines)


def location(skill: Skill, workspace: Path) -> str:
    """Its SKILL.md as the file tools take it: relative inside the workspace."""
    root = os.path.realpath(workspace)
    text = str(skill.file)
    return text[len(root) + 1 :] if text.startswith(root.rstrip("/") + "/") else text


def mentioned(text: str, skills: Skills) -> list[Skill]:
    """The skills `text` mentions as `$name`, each once, in order."""
    names = dict.fromkeys(match.group(1) for match in MENTION.finditer(text))
    return [skill for name in names if (skill := skills.named(name)) is not None]


def attach_mentioned(text: str, skills: Skills, workspace: Path) -> tuple[str, list[str]]:
    """The message with each mentioned skill's SKILL.md appended (the model need not read
    it first), and a note for each."""
    from agentcli.workspace.safe_open import read_regular

    attached, notes = [], []
    for skill in mentioned(text, skills):
        try:
            data = read_regular(skill.file, skill.folder, MAX_BYTES)
        except OSError:
            notes.append(f"${skill.name}: its SKILL.md could not be read; not attached")
            continue
        body = data.decode("utf-8", errors="replace")
        where = location(skill, workspace)
        attached.append(f'<skill name="{skill.name}" location="{where}">\n{body}\n</skill>')
        notes.append(f"using skill {skill.name} ({skill.origin})")
    if not attached:
        return text, notes
    return text + "\n\n" + "\n\n".join(attached), notes
