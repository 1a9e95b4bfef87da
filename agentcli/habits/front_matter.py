"""The YAML front matter of a Markdown file (SKILL.md, a command, an agent definition):
the mapping between a first line `---` and the next `---`, then the body. Parsed by PyYAML's
safe loader (no tags that build objects), imported only when a file is read. A problem is
one line that says what is wrong and where."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

FENCE = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)


class FrontMatterError(ValueError):
    """Front matter that cannot be read: one line, without the file's name (the caller
    names it)."""


def split_front_matter(text: str, *, required: bool) -> tuple[dict[str, Any], str]:
    """(the front matter's fields, the body). Without a front matter: ({}, text) — or an
    error when `required`."""
    text = text.removeprefix("\ufeff")
    first, _, rest = text.partition("\n")
    if not FENCE.fullmatch(first):
        if required:
            raise FrontMatterError("it does not start with YAML front matter (a line ---)")
        return {}, text
    closing = FENCE.search(rest)
    if closing is None:
        raise FrontMatterError("its front matter has no closing --- line")
    block, body = rest[: closing.start()], rest[closing.end() :].removeprefix("\n")
    return _mapping(block), body


def _mapping(block: str) -> dict[str, Any]:
    import yaml

    # PyYAML's safe loader, in libyaml's C where the wheel has it (the same safe schema,
    # a tenth of the time); yaml.safe_load's pure Python elsewhere.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _refuse_aliases(yaml.scan(block, Loader=loader))
        data = yaml.load(block, Loader=loader)
    except yaml.YAMLError as error:
        raise FrontMatterError(
            f"its front matter is not valid YAML ({_where(error)}); put a value that holds "
            "[ ] { } : or # in quotes"
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError("its front matter is not a mapping of fields (name: value)")
    for key in data:
        if not isinstance(key, str):
            raise FrontMatterError(f"its front matter has a field named {key!r}, not a word")
    return data


def _refuse_aliases(tokens: Any) -> None:
    """No alias (`*a`) is read: ten lines of aliases of aliases build a billion items (a
    "billion laughs"), and every run reads every habit file. Scanning costs the text's
    length; nothing is built. No field of a skill, command or agent needs one."""
    import yaml

    for token in tokens:
        if isinstance(token, yaml.AliasToken):
            raise FrontMatterError(
                f"its front matter uses a YAML alias (*{token.value}, line "
                f"{token.start_mark.line + 2}), which agentcli does not read; write the "
                "value out"
            )


def _where(error: Any) -> str:
    """PyYAML's problem and its line in the file (the front matter starts on line 2)."""
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    mark = getattr(error, "problem_mark", None)
    return f"{problem}, line {mark.line + 2}" if mark is not None else str(problem)


def text_field(fields: dict[str, Any], name: str, *, limit: int | None = None) -> str | None:
    """A field that must be text (None when absent); an error names the field."""
    value = fields.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise FrontMatterError(f"{name} must be text, not {_kind(value)} (quote it)")
    value = value.strip()
    if limit is not None and len(value) > limit:
        raise FrontMatterError(f"{name} is {len(value):,} characters; at most {limit:,} may be")
    return value


def model_field(fields: dict[str, Any]) -> str | None:
    """`model`: text that `--model` would take, so no control character (an escape would
    reach the server in the request and every status line)."""
    from agentcli.config.schema import model_name_problem

    value = text_field(fields, "model")
    problem = model_name_problem(value, "in its front matter") if value else None
    if problem is not None:
        raise FrontMatterError(problem)
    return value


def word_list(fields: dict[str, Any], name: str) -> list[str]:
    """A list of tool names or rules: YAML's list, or one text whose items are separated by
    spaces or commas outside parentheses (`Bash(git add:*) Read`, `Read, Grep`)."""
    value = fields.get(name)
    if value is None:
        return []
    if isinstance(value, list):
        if not all(isinstance(item, str) for item in value):
            raise FrontMatterError(f"{name} must be a list of tool names")
        return [item.strip() for item in value if item.strip()]
    if not isinstance(value, str):
        raise FrontMatterError(f"{name} must be tool names, not {_kind(value)}")
    items, word, depth = [], "", 0
    for char in value:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth <= 0 and (char.isspace() or char == ","):
            items.append(word)
            word, depth = "", 0
        else:
            word += char
    return [item for item in [*items, word] if item]


def _kind(value: Any) -> str:
    return {
        bool: "true or false",
        int: "a number",
        float: "a number",
        list: "a list",
        dict: "a mapping",
    }.get(type(value), type(value).__name__)


def read_habit_file(path: Path, max_bytes: int) -> str:
    """A command or subagent file's text: a regular file (reached without following a
    link past the one it is), within `max_bytes`, UTF-8; else FrontMatterError saying why."""
    import os

    from agentcli.workspace.safe_open import read_regular

    real = Path(os.path.realpath(path))
    try:
        data = read_regular(real, real.parent, max_bytes + 1)
    except OSError:
        raise FrontMatterError("it could not be read as a regular file") from None
    if len(data) > max_bytes:
        raise FrontMatterError(f"it is over {max_bytes // 1024} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FrontMatterError("it is not UTF-8 text") from None
