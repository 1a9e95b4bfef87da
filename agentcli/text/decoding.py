"""Text at agentcli's edges: one policy for every way text comes in or goes out.

- Contents (file text, command output, stdin, MCP stdio, HTTP bodies) are UTF-8; a byte
  that is not is shown as U+FFFD (`contents`).
- Names (file names, argv, the environment) stay as the OS gives them while agentcli uses
  them (Python's surrogateescape: byte 0xFF is U+DCFF). When a name becomes text — for the
  model, a file, the screen — each such byte is written `\\xff` (`shown`): visible, and
  reversible, so a path the model sends back opens the same file (`os_name`).
- Text a JSON parser made (a model's stream, a client's body, a tool's arguments) may hold a
  lone surrogate (`"\\ud800"` is valid JSON): it names nothing and becomes U+FFFD (`loads`).

So no string that leaves agentcli holds a lone surrogate: UTF-8 cannot encode one, and the
session file, the terminal and HTTP responses all write UTF-8. `writable` and `encoded` are
the writers' last guard for anything that slipped past an edge."""

from __future__ import annotations

import codecs
import contextlib
import math
import re
from typing import Any

_LONE = re.compile("[\ud800-\udfff]")  # in a str from Python: every surrogate is a lone one
_ESCAPED = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")  # a shown byte 0x80-0xFF
_JSON_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")  # a surrogate escape in JSON text
REPLACEMENT = "\ufffd"
ERROR_HANDLER = "agentcli-shown"  # a codec error handler: surrogates written as `shown` does


def _show(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte the OS gave that is not UTF-8: visible, reversible
        return f"\\x{code - 0xDC00:02x}"
    return REPLACEMENT


def shown(text: str) -> str:
    """`text` with no lone surrogate: undecodable bytes of a name as `\\xHH`, any other
    lone surrogate as U+FFFD. The same string when there is nothing to change."""
    if text.isascii() or not _LONE.search(text):
        return text
    return _LONE.sub(_show, text)


def shown_bytes(data: bytes) -> str:
    """A name given as bytes (a file name, an argument), as `shown` text."""
    return shown(data.decode("utf-8", "surrogateescape"))


def os_name(text: str) -> str:
    """The name the OS knows for one that was shown as text: `\\xHH` (80-FF, bytes that
    are never UTF-8 alone) back to the byte it shows."""
    if "\\x" not in text:
        return text
    return _ESCAPED.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), text)


def os_path(base: str, text: str) -> str:
    """`text` (a path, relative to `base` or absolute) as the OS names it, one component at
    a time: a component that exists as written is that one (a real name that spells `\\xff`
    wins), else the one `os_name` reads from it. The one name this cannot tell apart from
    another: a component holding both a literal `\\xHH` and a byte that is not UTF-8."""
    import os

    current = text[:1] if text.startswith("/") else base
    for part in text.split("/"):
        if not part:
            continue
        candidate = os.path.join(current, part)
        if "\\x" in part and not os.path.lexists(candidate):
            candidate = os.path.join(current, os_name(part))
        current = candidate
    return current


def contents(data: bytes) -> str:
    """Bytes that are text (not names): UTF-8, anything else as U+FFFD."""
    return data.decode("utf-8", "replace")


class TooDeep(ValueError):
    """JSON nested deeper than Python's parser can go (a RecursionError inside)."""


def _json_loads(text: str | bytes, **options: Any) -> Any:
    """json.loads, imported at the first call (most commands never parse JSON from
    outside), then called directly: this name is rebound to it."""
    global _json_loads
    import json

    _json_loads = json.loads
    return json.loads(text, **options)


def _whole_text(text: str) -> Any:
    """json.loads(text) for a str, without the two whitespace scans its wrapper makes: the
    decoder's public raw_decode when the value spans the whole text; anything else (space
    around it, a BOM, extra data, bad JSON) goes to json.loads, for its value or its error.
    A streamed answer parses one small document per piece, where the scans cost a third."""
    global _whole_text
    import json

    raw_decode = json.JSONDecoder().raw_decode  # json.loads's own defaults

    def whole_text(text: str) -> Any:
        try:
            value, end = raw_decode(text)
        except ValueError:
            return _json_loads(text)
        return value if end == len(text) else _json_loads(text)

    _whole_text = whole_text
    return whole_text(text)


class TooLong(ValueError):
    """A number with more digits than Python reads (a peer's, never a real count)."""


class NotJson(ValueError):
    """NaN, Infinity or -Infinity in the text: Python's json reads them, JSON has no such
    values, and nothing that holds one can be written as JSON again (`allow_nan=False`)."""

    def __init__(self, constant: str) -> None:
        super().__init__(f"{constant} is not JSON")
        self.constant = constant


def _refuse_constant(name: str) -> Any:
    raise NotJson(name)


def _finite_text(text: str) -> Any:
    """`_whole_text` with NaN and the infinities refused (`NotJson`): its own decoder, made
    at the first call, so each streamed piece costs what `loads` costs it."""
    global _finite_text
    import json

    raw_decode = json.JSONDecoder(parse_constant=_refuse_constant).raw_decode

    def whole(text: str) -> Any:  # json.loads, for its value (space around it) or error
        return _json_loads(text, parse_constant=_refuse_constant)

    def finite_text(text: str) -> Any:
        try:
            value, end = raw_decode(text)
        except NotJson:
            raise
        except ValueError:
            return whole(text)
        return value if end == len(text) else whole(text)

    _finite_text = finite_text
    return finite_text(text)


def _document_text(data: bytes) -> str:
    """A JSON document's bytes as text, in the encoding json.loads would read them in."""
    import json

    return data.decode(json.detect_encoding(data), "surrogatepass")


def loads(text: str | bytes, *, finite: bool = False, **options: Any) -> Any:
    """`json.loads` for JSON from outside: nesting too deep for the parser is a ValueError
    (TooDeep) like any other bad JSON, and its strings hold no lone surrogate (`shown`).
    `finite`: NaN, Infinity and -Infinity are not JSON either (`NotJson`), for a peer's
    values that are kept and sent on (a model's stream)."""
    try:
        if finite and not options:
            value = _finite_text(text if type(text) is str else _document_text(text))
        elif options or type(text) is not str:
            if finite:
                options.setdefault("parse_constant", _refuse_constant)
            value = _json_loads(text, **options)
        else:
            value = _whole_text(text)
    except RecursionError:
        raise TooDeep("the JSON is nested too deeply") from None
    except ValueError as error:
        if "integer string conversion" not in str(error):
            raise
        # Python's own limit on int() (4,300 digits), worded as its advice to programmers.
        raise TooLong("a number too long to read") from None
    raw = text if isinstance(text, str) else text.decode("utf-8", "replace")
    if "\\u" in raw and _JSON_SURROGATE.search(raw):
        return writable(value)
    return value


def lone_free_lines(text: str) -> str:
    """JSON lines (an MCP server's stdout) with every lone surrogate escape (`"\\ud800"`,
    valid JSON that pydantic's parser refuses: the SDK would drop the whole answer) written
    as U+FFFD; a line that is not JSON, or holds none, is kept as it came."""
    if "\\u" not in text or not _JSON_SURROGATE.search(text):
        return text
    import json

    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if not _JSON_SURROGATE.search(line):
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue  # not JSON: the reader says so
        fixed = writable(value)
        if fixed is not value:
            end = line[len(line.rstrip("\r\n")) :]
            lines[number] = json.dumps(fixed, ensure_ascii=False) + end
    return "".join(lines)


def writable(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, strings) with every string made `shown`: the
    same object when nothing needs changing, else a copy. Iterative: no depth limit."""
    if isinstance(value, str):
        return shown(value)
    if not isinstance(value, dict | list) or not _holds_lone(value):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]  # (container, key, item)
    while stack:
        parent, key, item = stack.pop()
        if isinstance(item, str):
            parent[key] = shown(item)
        elif isinstance(item, dict):
            copy = {shown(k) if isinstance(k, str) else k: v for k, v in item.items()}
            parent[key] = copy
            stack.extend((copy, name, child) for name, child in copy.items())
        elif isinstance(item, list):
            copy = list(item)
            parent[key] = copy
            stack.extend((copy, index, child) for index, child in enumerate(copy))
    return root[0]


def all_finite(value: Any) -> bool:
    """Whether `value` (JSON-like) holds no NaN or infinity, which JSON cannot write: what
    an older agentcli kept of a stream that sent one. Iterative: no depth limit."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is float and not math.isfinite(item):
            return False
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def _holds_lone(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and _LONE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(k for k in item if isinstance(k, str))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def encoded(text: str) -> bytes:
    """UTF-8 for a writer, whatever `text` holds (surrogates as `shown` writes them)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return shown(text).encode("utf-8")


def _handler(error: UnicodeError) -> tuple[bytes, int]:
    # Bytes, not str: the UTF-8 encoder takes only ASCII in a str replacement.
    if not isinstance(error, UnicodeEncodeError):
        raise error
    bad = error.object[error.start : error.end]
    return shown(bad).encode("utf-8", "replace"), error.end


codecs.register_error(ERROR_HANDLER, _handler)


def guard_stream(stream: Any) -> None:
    """A text stream (stdout, stderr) that writes a lone surrogate as `shown` does, rather
    than raising UnicodeEncodeError in the middle of an answer."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and getattr(stream, "encoding", "").lower() in ("utf-8", "utf8"):
        with contextlib.suppress(ValueError, OSError):  # closed, or not reconfigurable
            reconfigure(errors=ERROR_HANDLER)
