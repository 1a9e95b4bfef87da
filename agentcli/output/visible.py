"""Text from the model or a tool, made safe to show on a terminal.

Model text, tool arguments and command output may carry escape sequences that erase lines
(so an approval prompt lies about what will run), set the clipboard (OSC 52) or the window
title (OSC 0). Every control character is replaced by a visible stand-in before it is
written: C0 controls by their Unicode control pictures (ESC → ␛, CR → ␍, BS → ␈), C1
controls (U+0080-U+009F, e.g. U+009B, a one-character CSI) and the invisible characters
that reorder or hide text (bidi overrides and isolates, zero-width joiners aside) as
`<U+XXXX>`. Newlines and tabs stay; CR LF becomes LF. agentcli's own styling is added
after this, so it is not affected.

`one_line` is the one function for text from outside that a listing or a message shows on
one line (a server's name, version, tool, prompt or resource names, its errors and log
lines, plug-in and model names, session titles, file names, configuration values): the
same stand-ins, and a newline shown as `\\n`, a tab as `\\t`, so a crafted name cannot pass
for another entry. `visible_json` is the same promise for `--json` output: the same data,
with the characters a terminal would obey written as JSON escapes."""

from __future__ import annotations

import re
from typing import Any

from agentcli import records

_PICTURES = {code: chr(0x2400 + code) for code in range(0x20) if code not in (0x09, 0x0A)}
_PICTURES[0x7F] = "\u2421"  # ␡
_NAMED = {code: f"<U+{code:04X}>" for code in range(0x80, 0xA0)}
_INVISIBLE = (
    0x061C,
    0x200B,
    0x200E,
    0x200F,
    0x2028,
    0x2029,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
    0xFEFF,
)
_NAMED.update({code: f"<U+{code:04X}>" for code in _INVISIBLE})
_TABLE = {**_PICTURES, **_NAMED}
_UNSAFE = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(_TABLE)) + "]")


def visible(text: str) -> str:
    """`text` with every control character shown instead of obeyed."""
    if not _UNSAFE.search(text):
        return text
    return text.replace("\r\n", "\n").translate(_TABLE)


_ONE_LINE = {**_TABLE, 0x0A: "\\n", 0x09: "\\t"}
_BREAKS = re.compile("[\n\t]")


def one_line(text: object) -> str:
    """`text` (str() of it) as one line of a terminal: every control character shown
    instead of obeyed, a newline as `\\n` and a tab as `\\t`."""
    text = text if isinstance(text, str) else str(text)
    if not _UNSAFE.search(text) and not _BREAKS.search(text):
        return text
    return text.translate(_ONE_LINE)


# What ends a line of a listing the model reads (and a terminal, which escapes the rest
# itself when it shows the listing): a name holding one would pass for another entry.
_LINE_ENDS = {0x0A: "\\n", 0x0D: "\\r", 0x0B: "\\v", 0x0C: "\\f", 0x85: "\\x85"}
_LINE_ENDS.update({0x2028: "\\u2028", 0x2029: "\\u2029"})
_ENDS = re.compile("[\n\r\v\f\x85\u2028\u2029]")


def name_on_one_line(name: str) -> str:
    """A file name as one entry of a listing the model reads: what would end the line is
    written as its escape (`\\n`), everything else kept, so the model can name the file
    back exactly (a terminal shows the listing through `visible`, which escapes the rest)."""
    return name.translate(_LINE_ENDS) if _ENDS.search(name) else name


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def visible_json(document: Any, *, indent: int | None = None) -> str:
    """`document` as JSON whose text a terminal shows as written: non-ASCII kept, but
    C1 controls and the invisible reordering characters (which JSON allows raw) written
    as `\\uXXXX`, so a reader of the JSON gets the same strings back."""
    import json

    text = json.dumps(document, indent=indent, ensure_ascii=False)
    return _UNSAFE.sub(_json_escape, text)  # C0 controls are escaped by json already


def _deep(value: Any) -> Any:
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, list):
        return [_deep(item) for item in value]
    if isinstance(value, dict):
        return {key: _deep(item) for key, item in value.items()}
    return value


def visible_event(event: Any) -> Any:
    """A copy of an event with every string in it made visible (the same event when it
    has nothing to change). Renderers call this first, so no field is forgotten."""
    changes = {}
    for field in records.fields(event):
        if not field.init:
            continue  # made from the other fields (a typed CUSTOM's value), visible with them
        value = getattr(event, field.name)
        if isinstance(value, (str, list, dict)):
            shown = _deep(value)
            if shown != value:
                changes[field.name] = shown
    return records.replace(event, **changes) if changes else event


def visible_piece(event: Any) -> Any:
    """visible_event for a streamed TEXT_MESSAGE_CONTENT, the one event a long answer sends
    thousands of: only its delta is shown, so only its delta is looked at."""
    shown = visible(event.delta)
    return event if shown is event.delta else records.replace(event, delta=shown)
