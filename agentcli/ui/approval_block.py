"""What the approval prompt shows: one compact block per call, made to fit the terminal
(40 columns too). The call exactly (a command as a command, code as code, a new file's
content or a diff, long ones as head and tail with a key to see all), the risk, the reason
in plain words, and one choice per line whose label says what it grants and for how long.

Everything from the model is made visible first (security.md 17): an escape sequence or a
CR in a file or a command cannot hide or rewrite a line of the prompt."""

from __future__ import annotations

import json
import os
from typing import Any, TextIO

from agentcli.output.visible import visible
from agentcli.policy.engine import ChoiceKind, Prompt, offered, remembered
from agentcli.records import dataclass
from agentcli.risk import Risk
from agentcli.ui.reasons import plain_reasons

MAX_CODE_LINES = 200  # of a command or code; the prompt says how many more there are
HEAD_LINES, TAIL_LINES = 10, 6  # of a long file or diff; `v` pages through the rest
KEY_OF: dict[ChoiceKind, str] = {
    "once": "y",
    "session": "s",
    "project": "p",
    "deny": "n",
    "deny_session": "d",
}
# What "this call only" is called for the tools that change files (`yes, this edit only`).
CALL_NOUN = {"edit_file": "edit", "write_file": "write"}
VIEW_KEY = "v"
HEADERS = ("+++ ", "--- ", "@@ ", "new file ")  # a preview's own lines, not the file's

TAB_WIDTH = 8


def on_screen(text: str) -> str:
    """`text` made visible, its tabs as spaces: the block wraps its own lines, and a raw
    tab at the terminal's right margin moves the cursor nowhere, so what follows it would
    be written over itself (a command could hide its end behind thirty tabs)."""
    return visible(text).expandtabs(TAB_WIDTH)


@dataclass(frozen=True, slots=True)
class Choice:
    key: str
    kind: ChoiceKind | None  # None: show the whole preview, then ask again
    label: list[str]  # words; a rule is one word, never broken across lines


def terminal_width(stream: TextIO, default: int = 80) -> int:
    try:
        return max(os.get_terminal_size(stream.fileno()).columns, 20)
    except (OSError, ValueError, AttributeError):
        return default


def _style(enabled: bool, code: str, text: str) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if enabled else text


def wrap(words: list[str], width: int, first: str, rest: str) -> list[str]:
    """Words into lines of at most `width` columns; a word too long for a line is cut."""
    lines: list[str] = []
    line = first
    fresh = True  # nothing on this line yet but its prefix
    for word in words:
        while True:
            sep = "" if fresh else " "
            if len(line) + len(sep) + len(word) <= width:
                line, fresh = line + sep + word, False
                break
            if not fresh:
                lines.append(line)
                line, fresh = rest, True
                continue
            room = max(width - len(line), 1)
            lines.append(line + word[:room])
            word, line = word[room:], rest
            if not word:
                break
    if not fresh or not lines:
        lines.append(line)
    return lines


def _words(text: str) -> list[str]:
    return text.split()


def _rules(rules: list[str]) -> list[str]:
    """Rules as words: each kept whole (a rule's space is no place to break a line)."""
    shown = [on_screen(r) for r in rules]
    return [f"{r}," for r in shown[:-1]] + shown[-1:]


def choice_label(kind: ChoiceKind, prompt: Prompt) -> list[str]:
    """What the choice grants, in words, from what the policy will remember for it."""
    risk = prompt.request.assessment.risk
    kept = _rules(remembered(kind, risk, prompt.session_rules))
    saved = _rules(prompt.session_rules)
    if kind == "once":
        noun = CALL_NOUN.get(prompt.request.tool, "call")
        return _words(f"yes, this {noun} only")
    if kind == "session":
        return [*_words("yes, and allow"), *kept, *_words("for this session")]
    if kind == "project":
        return [*_words("yes, and always allow"), *saved, *_words("in this project (saved)")]
    if kind == "deny_session":
        return [*_words("no, and refuse"), *kept, *_words("for this session")]
    return _words("no (you may tell the model why)")


def choices(prompt: Prompt, preview_cut: bool) -> list[Choice]:
    found = [Choice(KEY_OF[kind], kind, choice_label(kind, prompt)) for kind in offered(prompt)]
    if preview_cut:
        found.append(Choice(VIEW_KEY, None, _words("show all of it first")))
    return found


def _code_lines(text: str, prefix: str) -> list[str]:
    """Every line of a command or code, control characters shown (an escape sequence or a
    CR cannot hide a line); past MAX_CODE_LINES, how much is not shown."""
    lines = on_screen(text).splitlines() or [""]  # after on_screen(), only \n splits
    shown = [prefix + line for line in lines[:MAX_CODE_LINES]]
    if len(lines) > MAX_CODE_LINES:
        rest = lines[MAX_CODE_LINES:]
        shown.append(
            f"… {len(rest)} more lines ({sum(len(x) + 1 for x in rest):,} characters) "
            "not shown: deny unless you know what they are"
        )
    return shown


def labelled(arguments: dict[str, Any]) -> list[str]:
    """Arguments as labelled fields, `path: calc.py`: a text as it is (its later lines
    under its first), anything else as compact JSON; every character visible."""
    lines: list[str] = []
    for key, value in arguments.items():
        label = on_screen(str(key))
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        first, *rest = _code_lines(text, "")
        lines.append(f"{label}: {first}")
        lines += [" " * (len(label) + 2) + line for line in rest]
    return lines


def describe_call(tool: str, arguments: dict[str, Any]) -> list[str]:
    """The arguments exactly: a command as a command, code as code, the others as
    labelled fields (a file's content and an edit's texts are in the preview, as lines or
    a diff)."""
    if tool == "run_shell" and "command" in arguments:
        lines = _code_lines(str(arguments["command"]), "$ ")
        return lines + labelled({k: v for k, v in arguments.items() if k != "command"})
    if tool == "run_python" and "code" in arguments:
        return ["python:", *_code_lines(str(arguments["code"]), "  ")]
    return labelled(
        {k: v for k, v in arguments.items() if k not in ("content", "old_text", "new_text")}
    )


def preview_lines(prompt: Prompt) -> list[str]:
    """The whole preview (a new file's lines, a diff), every character visible."""
    preview = prompt.request.preview
    return on_screen(preview).splitlines() if preview else []


def style_preview_line(line: str, color: bool) -> str:
    """Diff lines keep their + and - (so they read without colour); colour adds to them."""
    if line.startswith(HEADERS):
        return _style(color, "2", line)
    if line.startswith("+"):
        return _style(color, "32", line)
    if line.startswith("-"):
        return _style(color, "31", line)
    return line


def fit(line: str, width: int, color: bool, style_first: Any = None) -> list[str]:
    """A line indented, cut to the width with `↪` before each continuation (so a piece of
    a long line never looks like a line of its own: a `-` line of a diff, say)."""
    room = max(width - 3, 10)
    pieces = [line[:room], *(line[i : i + room] for i in range(room, len(line), room))]
    first = style_first(pieces[0]) if style_first else pieces[0]
    return ["  " + first, *(_style(color, "2", "  ↪") + piece for piece in pieces[1:])]


def fit_preview_line(line: str, width: int, color: bool) -> list[str]:
    if line.startswith(HEADERS):  # the tool's own words: wrapped between words
        return [_style(color, "2", x) for x in wrap(_words(line), width, "  ", "    ")]
    return fit(line, width, color, lambda piece: style_preview_line(piece, color))


def _heading(prompt: Prompt, width: int) -> list[str]:
    request = prompt.request
    risk = request.assessment.risk
    where = f"· sandbox {request.sandbox}" if request.sandbox else ""
    words = ["Allow", f"{on_screen(request.tool)}?", f"{risk.label} risk", *_words(where)]
    if request.asker:  # a subagent's call: the person sees who asks
        words = ["subagent", f"{on_screen(request.asker)}:", *words]
    return wrap(words, width, "● ", "  ")


def _is_cut(preview: list[str]) -> bool:
    return len(preview) > HEAD_LINES + TAIL_LINES + 1


def prompt_choices(prompt: Prompt) -> list[Choice]:
    """The choices the block offers, in the order shown."""
    return choices(prompt, _is_cut(preview_lines(prompt)))


def render_prompt(prompt: Prompt, color: bool, width: int = 80) -> str:
    """The block, to its last choice (the key is read below it)."""
    offer = choices(prompt, _is_cut(preview_lines(prompt)))
    return (
        "\n".join([*block_lines(prompt, color, width), *choice_lines(offer, width, color)]) + "\n"
    )


def block_lines(prompt: Prompt, color: bool, width: int, *, whole: bool = False) -> list[str]:
    """The block above its choices: the heading, the call, the preview (its head and
    tail), why it asks. `whole`: the block of an answered call shown again — no question
    heading (its folded line said the answer), the whole preview."""
    request = prompt.request
    risk = request.assessment.risk
    colour = "31" if risk is Risk.HIGH else "33"
    heading = [] if whole else _heading(prompt, width)
    out = [_style(color, f"1;{colour}", line) for line in heading]
    if request.description:
        lines = [on_screen(line) for line in request.description]
    else:
        lines = describe_call(request.tool, request.arguments)
    out += [piece for line in lines for piece in fit(line, width, color)]
    preview = preview_lines(prompt)
    cut = _is_cut(preview) and not whole
    shown = [*preview[:HEAD_LINES], "", *preview[-TAIL_LINES:]] if cut else preview
    for index, line in enumerate(shown):
        if cut and index == HEAD_LINES:
            more = len(preview) - HEAD_LINES - TAIL_LINES
            note = f"… {more:,} more lines ({VIEW_KEY} shows them)"
            out += [_style(color, "2", x) for x in wrap(_words(note), width, "  ", "    ")]
        else:
            out += fit_preview_line(line, width, color)
    why = plain_reasons(prompt.reasons)
    if why:
        out += [_style(color, "2", x) for x in wrap(_words("why: " + why), width, "  ", "       ")]
    return out


def choice_lines(offer: list[Choice], width: int, color: bool) -> list[str]:
    """One choice per line (wrapped under its label): `  y  yes, this call only`."""
    out = []
    for choice in offer:
        first, *rest = wrap(choice.label, width, f"  {choice.key}  ", "     ")
        out += [f"  {_style(color, '1', choice.key)}{first[3:]}", *rest]
    return out


def granted(choice: Choice) -> str:
    """The answer, said back: what was chosen, with its scope."""
    return " ".join(choice.label).removesuffix(" (you may tell the model why)")
