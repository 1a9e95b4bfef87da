"""Text from the model or a tool, made safe to show on a terminal.

Model text, tool arguments and command output may carry escape sequences that erase lines
(so an approval prompt lies about what will run), set the clipboard (OSC 52) or the window
title (OSC 0). Every control character is replaced by a visible stand-in before it is
written: C0 controls by their Unicode control pictures (ESC → ␛, CR → ␍, BS → ␈), C1
controls (U+0080-U+009F, e.g. U+009B, a one-character CSI) and the invisible characters
that reorder or hide text (bidi overrides and isolates, zero-width joiners aside) as
`<U+XXXX>`. Newlines and tabs stay; CR LF becomes LF. agentcli's own styling is added
after this, so it is not affected."""

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
