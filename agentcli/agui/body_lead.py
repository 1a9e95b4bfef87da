"""A RunAgentInput body parsed from where its thread's last request left off.

AG-UI clients send a thread's whole history with each run, and each run's `messages`
array begins with the last run's elements byte for byte (the same JSON.stringify of the
same objects). So the kept bytes of those elements are compared with the new body's
(memcmp) and, when equal, what they parsed to last time is what they parse to now; the
rest of the body is parsed by the standard library's decoder, one value at a time. Only
the top-level object's punctuation and the array's commas are walked here.

What `read` gives is what `loads(contents(body))` gives, or None: then the caller takes
that path, for its value or its error. None is the answer to anything unusual — a body
that is not UTF-8, a top level that is not an object, a `messages` key written twice or
with escapes, a parse error anywhere, a thread id that changes after the array — so a
surprise here costs a full parse, never a different answer."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from json.decoder import scanstring
from typing import Any

from agentcli.records import dataclass
from agentcli.text.decoding import shown, writable

_raw_decode = json.JSONDecoder().raw_decode  # json.loads's own defaults (NaN, strict strings)
_ws = re.compile(r"[ \t\n\r]*").match  # json.decoder's WHITESPACE
_OPENED = re.compile(rb'"messages"[ \t\n\r]*:[ \t\n\r]*\[[ \t\n\r]*')
_AFTER_ELEMENT = (b" ", b"\t", b"\n", b"\r", b",", b"]")
HINTS = 4  # `"messages"` inside earlier values (a state's own messages) tried past, then None
# json.loads nests every value 1-2 levels deeper than `_value` does (the top object, the
# array): a value that might be near the recursion limit is parsed again inside MARGIN more
# brackets, so that one json.loads would refuse (TooDeep) is refused here too. A value with
# at most SHALLOW brackets is far from any limit.
SHALLOW = 64
MARGIN = 8


class _Unusual(Exception):
    """A body this module does not read: the caller parses it whole."""


@dataclass(frozen=True, slots=True)
class Lead:
    """A thread's last `messages` array: its elements' bytes (the first's start to the
    last's end) and the values they parsed to, in order."""

    span: bytes
    values: list[Any]


@dataclass(frozen=True, slots=True)
class Read:
    """A parsed body. Its first `known` messages are `used`'s values, the very objects."""

    data: Any
    known: int = 0
    used: Lead | None = None
    lead: Lead | None = None  # this body's array, for the thread's next request
    parsed: int = 0  # messages parsed for it


def read(body: bytes, lead_of: Callable[[str], Lead | None]) -> Read | None:
    """`body` parsed, its messages' lead taken from `lead_of(thread id)` where the bytes
    match; None where the body is unusual (see the module's docstring)."""
    try:
        return _read(body, lead_of)
    except (_Unusual, ValueError, RecursionError, IndexError):  # UnicodeDecodeError too
        return None


def _read(body: bytes, lead_of: Callable[[str], Lead | None]) -> Read:
    at, members = _find_messages(body)
    opened = _OPENED.match(body, at)
    if opened is None:
        raise _Unusual
    first = opened.end()
    before = dict(members)
    thread = before.get("threadId", before.get("thread_id"))
    used = lead_of(thread) if isinstance(thread, str) else None
    values: list[Any] = []
    after = first
    if used is not None and used.values:
        end = first + len(used.span)
        if body.startswith(used.span, first) and body[end : end + 1] in _AFTER_ELEMENT:
            values = list(used.values)
            after = end
    known = len(values)
    if not known:
        used = None
    tail = body[after:].decode()  # strict: bytes that are not UTF-8 take the full path
    pos, last = _elements(tail, values, known)
    rest: list[tuple[str, Any]] = []
    while True:
        pos = _ws(tail, pos).end()
        mark = tail[pos : pos + 1]
        if mark == "}":
            break
        if mark != ",":
            raise _Unusual
        pos = _member(tail, _ws(tail, pos + 1).end(), rest)
        if rest[-1][0] == "messages":
            raise _Unusual
    if _ws(tail, pos + 1).end() != len(tail):
        raise _Unusual  # extra data: json.loads's error
    data = dict([*members, ("messages", values), *rest])  # the last of duplicate keys wins
    if any(shown(key) != key for key in data):  # as `writable` does to the whole value
        data = {shown(key): value for key, value in data.items()}
    if used is not None and data.get("threadId", data.get("thread_id")) != thread:
        raise _Unusual  # the lead was chosen by a thread id a later key replaced
    return Read(
        data, known, used, _lead(body, first, after, tail, last, used, values), len(values) - known
    )


def _find_messages(body: bytes) -> tuple[int, list[tuple[str, Any]]]:
    """Where the top-level `"messages"` key starts, and the members before it."""
    start = 0
    for _ in range(HINTS):
        at = body.find(b'"messages"', start)
        if at < 0:
            raise _Unusual
        head = body[:at].decode()  # strict; ends before an ASCII quote, so never mid-character
        try:
            members = _head(head)
        except ValueError:  # a value cut short: this `"messages"` was inside it
            members = None
        if members is not None:
            return at, members
        start = at + 1
    raise _Unusual


def _head(text: str) -> list[tuple[str, Any]] | None:
    """The top-level members in `text`, when it ends where a member's key starts."""
    pos = _ws(text, 0).end()
    if text[pos : pos + 1] != "{":
        raise _Unusual
    pos = _ws(text, pos + 1).end()
    members: list[tuple[str, Any]] = []
    while pos < len(text):
        pos = _ws(text, _member(text, pos, members)).end()
        if members[-1][0] == "messages":
            raise _Unusual  # a key spelled with escapes: a duplicate, or one not found
        if text[pos : pos + 1] != ",":
            return None
        pos = _ws(text, pos + 1).end()
    return members


def _member(text: str, pos: int, members: list[tuple[str, Any]]) -> int:
    if text[pos : pos + 1] != '"':
        raise _Unusual
    key, pos = scanstring(text, pos + 1)  # strict, as json.loads
    pos = _ws(text, pos).end()
    if text[pos : pos + 1] != ":":
        raise _Unusual
    value, pos = _value(text, _ws(text, pos + 1).end())
    members.append((key, value))
    return pos


def _elements(text: str, values: list[Any], known: int) -> tuple[int, int]:
    """The array's elements after the `known` ones appended to `values`: the position
    after its `]`, and the end of its last element parsed here (-1: none)."""
    pos, last = 0, -1
    if not known:
        if text.startswith("]"):  # `[` and the space after it are behind `text`
            return 1, -1
        value, pos = _value(text, 0)
        values.append(value)
        last = pos
    while True:
        pos = _ws(text, pos).end()
        mark = text[pos : pos + 1]
        if mark == "]":
            return pos + 1, last
        if mark != ",":
            raise _Unusual
        value, pos = _value(text, _ws(text, pos + 1).end())
        values.append(value)
        last = pos


def _value(text: str, pos: int) -> tuple[Any, int]:
    """One JSON value, parsed by the stdlib, as `loads` gives it (no lone surrogate)."""
    value, end = _raw_decode(text, pos)
    if text.count("{", pos, end) + text.count("[", pos, end) > SHALLOW:
        _raw_decode("[" * MARGIN + text[pos:end] + "]" * MARGIN)  # RecursionError: None
    if text.find("\\u", pos, end) >= 0:  # only an escape makes a lone surrogate
        value = writable(value)
    return value, end


def _lead(
    body: bytes,
    first: int,
    after: int,
    tail: str,
    last: int,
    used: Lead | None,
    values: list[Any],
) -> Lead | None:
    if last < 0:  # nothing new: the same bytes, or an empty array
        return Lead(used.span, values) if used is not None else None
    size = last if tail.isascii() else len(tail[:last].encode())
    return Lead(body[first : after + size], values)
