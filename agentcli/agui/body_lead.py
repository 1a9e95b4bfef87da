"""A RunAgentInput body parsed from where its thread's last request left off.

AG-UI clients send a thread's whole history with each run, and each run's `messages`
array begins with the last run's elements byte for byte (the same JSON.stringify of the
same objects). So the kept bytes of those elements are compared with the new body's
(memcmp) and, when equal and followed by a delimiter (so `1` is not the start of `12`),
what they parsed to last time is what they parse to now: the same UTF-8 (every piece
decoded here was valid, and pieces are cut at ASCII bytes) read by the same parser. The
rest of the body is parsed by the standard library's decoder, a value per call (a new
thread's array, when it is the last member, in one call). Only the top-level object's
punctuation and the array's commas are walked here.

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
from json.scanner import make_scanner
from typing import Any

from agentcli.records import dataclass
from agentcli.text.decoding import shown, writable

# The C scanner json.loads runs, with its defaults (NaN, strict strings): (value, end)
_scan = make_scanner(json.JSONDecoder())
_ws = re.compile(r"[ \t\n\r]*").match  # json.decoder's WHITESPACE
_OPENED = re.compile(rb'"messages"[ \t\n\r]*:[ \t\n\r]*\[[ \t\n\r]*')
_AFTER_ELEMENT = (b" ", b"\t", b"\n", b"\r", b",", b"]")
_SPACE = frozenset(" \t\n\r")
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")  # a surrogate escape, as `loads` looks for
HINTS = 4  # `"messages"` inside earlier values (a state's own messages) tried past, then None
# json.loads nests every value 1-2 levels deeper than `_value` does (the top object, the
# array): a value that might be near the recursion limit is parsed again inside MARGIN more
# brackets, so that one json.loads would refuse (TooDeep) is refused here too. A value with
# at most SHALLOW brackets (one of at most 2 * SHALLOW characters) is far from any limit.
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
            # the very objects: RunInputs gives their validated messages back by identity
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
        whole = _whole_array(text)
        if whole is not None:
            values.extend(whole[0])
            return whole[1] + 1, whole[2]
        value, pos = _value(text, 0)
        values.append(value)
        last = pos
    while True:  # a loop per message of a new thread: no call where there is no space
        mark = text[pos : pos + 1]
        if mark in _SPACE:
            pos = _ws(text, pos).end()
            mark = text[pos : pos + 1]
        if mark == "]":
            return pos + 1, last
        if mark != ",":
            raise _Unusual
        pos += 1
        if text[pos : pos + 1] in _SPACE:
            pos = _ws(text, pos).end()
        value, pos = _value(text, pos)
        values.append(value)
        last = pos


def _whole_array(text: str) -> tuple[list[Any], int, int] | None:
    """A new thread's array (or one whose lead differs) parsed in one call, where it is the
    body's last member: its values, the position of its `]`, the end of its last element.
    None: it is not last (the caller goes element by element)."""
    close = _before_space(text, len(text))
    if text[close - 1 : close] != "}":
        return None
    close = _before_space(text, close - 1) - 1
    if text[close : close + 1] != "]":
        return None
    nested = "".join(("[" * (MARGIN + 1), text[:close], "]" * (MARGIN + 1)))  # see MARGIN
    try:
        value, end = _scan(nested, 0)
    except (ValueError, StopIteration):  # not one array: another member after it
        return None
    if end != len(nested):
        return None
    for _ in range(MARGIN):
        if len(value) != 1:
            return None
        value = value[0]
    if _escapes(text, 0, close):
        value = writable(value)
    return value, close, _before_space(text, close)


def _before_space(text: str, end: int) -> int:
    while end and text[end - 1] in _SPACE:
        end -= 1
    return end


def _value(text: str, pos: int) -> tuple[Any, int]:
    """One JSON value, parsed by the stdlib, as `loads` gives it (no lone surrogate)."""
    try:
        value, end = _scan(text, pos)
    except StopIteration:  # no value starts at `pos`
        raise _Unusual from None
    if end - pos > 2 * SHALLOW and text.count("{", pos, end) + text.count("[", pos, end) > SHALLOW:
        _scan("[" * MARGIN + text[pos:end] + "]" * MARGIN, 0)  # RecursionError: None
    if _escapes(text, pos, end):
        value = writable(value)
    return value, end


def _escapes(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] escapes a surrogate: only that makes a lone one, for
    `writable` (`loads` asks the same of the whole text)."""
    return text.find("\\", start, end) >= 0 and _SURROGATE.search(text, start, end) is not None


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
