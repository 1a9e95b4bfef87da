"""Reading sed and awk programs: read-only when they only print.

A sed script may write (`w`, `s///w`), run commands (`e`, `s///e`) or read other files
(`r`, `R`); an awk program may run commands (`system`, `print | cmd`, `cmd | getline`),
write (`print > file`), read other files (`getline < file`, a changed `ARGV`) or load
code (`@include`, `@load`). Each is parsed far enough to find those, failing closed on
anything it does not understand."""

from __future__ import annotations

import re

# --- sed ------------------------------------------------------------------------------

_SED_SIMPLE = set("=dDgGhHnNpPxzF")  # commands without arguments that only print or edit
_SED_NUMBER = set("lqQL")  # take an optional number
_SED_LABEL = set("btT")
_SED_TEXT = set("aic")
_SED_DENIED = {
    "w": "writes a file",
    "W": "writes a file",
    "r": "reads a file",
    "R": "reads a file",
    "e": "runs a command",
}
_SED_RUNS = {"e": "runs a command"}
_SED_FILES = set("wWrR")  # their file name runs to the end of the line
_SED_ADDRESS = re.compile(r"\d+~\d+|\d+|\$|[+~]\d+")


def sed_script_problem(script: str) -> str | None:
    """Why a sed script is not read-only, or None."""
    return _sed_scan(script, _SED_DENIED, "we")


def sed_script_runs(script: str) -> str | None:
    """Why a sed script may run a command (`e`, `s///e`, or a script it cannot read)."""
    return _sed_scan(script, _SED_RUNS, "e")


def _sed_scan(script: str, denied: dict[str, str], denied_flags: str) -> str | None:
    index, depth = 0, 0
    while True:
        index = _skip(script, index, " \t\n;")
        if index >= len(script):
            return "unbalanced braces in the sed script" if depth else None
        if script[index] == "#":
            index = _line_end(script, index)
            continue
        for _ in range(2):  # up to two addresses
            index = _skip(script, index, " \t")
            index = _sed_address(script, index)
            if index < 0:
                return "a sed address it cannot read"
            index = _skip(script, index, " \t")
            if index < len(script) and script[index] == ",":
                index += 1
                continue
            break
        while index < len(script) and script[index] in "! \t":
            index += 1
        if index >= len(script):
            return "a sed address without a command"
        command = script[index]
        index += 1
        if command in denied:
            return f"the sed command `{command}` {denied[command]}"
        if command in _SED_FILES:
            index = _line_end(script, index)
            continue
        if command == "{":
            depth += 1
            continue  # a command may follow at once
        elif command == "}":
            depth -= 1
            if depth < 0:
                return "unbalanced braces in the sed script"
        elif command in _SED_SIMPLE or command == "v":
            pass
        elif command in _SED_NUMBER:
            index = _skip(script, index, " \t0123456789")
        elif command in _SED_LABEL or command == ":":
            while index < len(script) and script[index] not in ";\n":
                index += 1
        elif command in _SED_TEXT:
            index = _sed_text(script, index)
        elif command in "sy":
            index, flags = _sed_substitution(script, index, parts=2)
            if index < 0:
                return f"a sed `{command}` command it cannot read"
            if command == "s":
                bad = next((f for f in flags if f in denied_flags), None)
                if bad is not None:
                    return f"the sed flag `s///{bad}` {'writes a file' if bad == 'w' else 'runs'}"
                if "w" in flags:  # the rest of the line names the file
                    index = _line_end(script, index)
                    continue
                if not re.fullmatch(r"[gpiImM0-9]*", flags):
                    return f"the sed flags {flags!r} are not known to be read-only"
        else:
            return f"the sed command `{command}` is not known to be read-only"
        index = _skip(script, index, " \t")
        if index < len(script) and script[index] not in ";\n}#":
            return "sed commands it cannot separate"


def _skip(text: str, index: int, characters: str) -> int:
    while index < len(text) and text[index] in characters:
        index += 1
    return index


def _line_end(text: str, index: int) -> int:
    end = text.find("\n", index)
    return len(text) if end < 0 else end


def _sed_address(script: str, index: int) -> int:
    """The index after an address at `index` (the same index when there is none), or -1."""
    if index >= len(script):
        return index
    if script[index] == "/" or script[index] == "\\":
        if script[index] == "\\":
            index += 1
        if index >= len(script):
            return -1
        end = _delimited(script, index + 1, script[index])
        return -1 if end < 0 else _skip(script, end, "IM")
    match = _SED_ADDRESS.match(script, index)
    return match.end() if match else index


def _delimited(text: str, index: int, delimiter: str) -> int:
    """The index after the next unescaped `delimiter` (newlines not allowed), or -1."""
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "\n" and delimiter != "\n":
            return -1
        if char == delimiter:
            return index + 1
        index += 1
    return -1


def _sed_substitution(script: str, index: int, parts: int) -> tuple[int, str]:
    """Past `s/re/replacement/flags` (or `y/a/b/`) starting at the delimiter: the index
    and the flags, or -1."""
    if index >= len(script) or script[index] in "\\\n":
        return -1, ""
    delimiter = script[index]
    index += 1
    for _ in range(parts):
        index = _delimited(script, index, delimiter)
        if index < 0:
            return -1, ""
    start = index
    while index < len(script) and script[index] not in ";\n}# \t":
        index += 1
    return index, script[start:index]


def _sed_text(script: str, index: int) -> int:
    """Past the text of `a`, `i` or `c` (one line, or more continued by backslashes)."""
    while index < len(script):
        end = _line_end(script, index)
        if end > index and script[end - 1] == "\\" and end < len(script):
            index = end + 1
            continue
        return end
    return index


# --- awk ------------------------------------------------------------------------------

_AWK_TOKEN = re.compile(
    r"""(?P<space>[ \t]+|\\\n)
      | (?P<newline>\n)
      | (?P<comment>\#[^\n]*)
      | (?P<string>"(?:[^"\\\n]|\\.)*")
      | (?P<number>\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)
      | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<op>\|\||\|&|&&|>>|>=|<=|==|!=|!~|\+\+|--|\*\*=?|[-+*/%^]=|[][(){};,$!~?:<>|=+\-*/%^&@])
    """,
    re.VERBOSE,
)
_AWK_KEYWORDS = {"print", "printf", "return", "in", "case", "else", "do", "getline"}
_AWK_DENIED_NAMES = {
    "system": "runs a command",
    "ARGV": "can make awk read other files",
    "ARGC": "can make awk read other files",
}


def awk_program_problem(program: str) -> str | None:
    """Why an awk program is not read-only (it may run, write or read other files)."""
    tokens = _awk_tokens(program)
    if tokens is None:
        return "an awk program it cannot read"
    in_print = False
    depth = 0  # parentheses inside the current print statement
    getline = False
    for kind, text in tokens:
        if kind == "name" and text in _AWK_DENIED_NAMES:
            return f"the awk program uses {text}, which {_AWK_DENIED_NAMES[text]}"
        if text in ("|", "|&"):
            return "the awk program pipes to or from a command"
        if text == "@":
            return "the awk program loads code or calls a function by name"
        if kind == "name" and text in ("print", "printf"):
            in_print, depth = True, 0
        elif kind == "name" and text == "getline":
            getline = True
        elif text in ("(", "["):
            depth += 1
        elif text in (")", "]"):
            depth -= 1
        elif text in (";", "}", "{") or kind == "newline":
            in_print = getline = False
        elif text in (">", ">>") and in_print and depth <= 0:
            return "the awk program writes to a file"
        elif text == "<" and getline:
            return "the awk program reads another file with getline"
    return None


def awk_script_runs(program: str) -> str | None:
    """Why an awk program may run a command (`system()`, a pipe, code loaded or called by
    name), or None."""
    tokens = _awk_tokens(program)
    if tokens is None:
        return "an awk program it cannot read"
    for kind, text in tokens:
        if kind == "name" and text == "system":
            return "the awk program uses system(), which runs a command"
        if text in ("|", "|&"):
            return "the awk program pipes to or from a command"
        if text == "@":
            return "the awk program loads code or calls a function by name"
    return None


def _awk_tokens(program: str) -> list[tuple[str, str]] | None:
    tokens: list[tuple[str, str]] = []
    index = 0
    while index < len(program):
        if program[index] == "/" and _regex_may_start(tokens):
            end = _delimited(program, index + 1, "/")
            if end < 0:
                return None
            tokens.append(("regex", program[index:end]))
            index = end
            continue
        match = _AWK_TOKEN.match(program, index)
        if match is None:
            return None
        kind = match.lastgroup or ""
        if kind not in ("space", "comment"):
            tokens.append((kind, match.group()))
        index = match.end()
    return tokens


def _regex_may_start(tokens: list[tuple[str, str]]) -> bool:
    """A `/` starts a regular expression unless it follows an operand (then it divides)."""
    if not tokens:
        return True
    kind, text = tokens[-1]
    if kind in ("number", "string", "regex"):
        return False
    if kind == "name":
        return text in _AWK_KEYWORDS
    return text not in (")", "]", "$", "++", "--")
