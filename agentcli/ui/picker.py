"""A list to choose one line from, under the prompt: ↑/↓ (or k/j) move, Enter picks,
Esc, Ctrl-C or q cancels. Used by `/resume` and `/model` with no argument."""

from __future__ import annotations

import shutil
from typing import Any

VISIBLE_ROWS = 10  # a longer list scrolls


def fit_row(title: str, tail: str, width: int) -> str:
    """`title · tail` in `width` columns, the title cut first (with …); the title alone
    when there is no tail (no dangling ` ·`)."""
    if not tail:
        return title if len(title) <= width else title[: max(width - 1, 0)] + "…"
    room = width - len(tail) - 3
    if room < 8:
        return (title + " · " + tail)[: max(width, 1)]
    if len(title) > room:
        title = title[: room - 1] + "…"
    return f"{title} · {tail}"


async def pick(
    title: str, rows: list[tuple[str, str]], *, start: int = 0, action: str = "resumes"
) -> int | None:
    """The index of the row chosen, or None when cancelled. `rows`: (title, tail) pairs,
    shown fitted to the terminal's width; `start`: the row chosen at first; `action`:
    what Enter does, in the key line."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import FormattedText
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    chosen = [min(max(start, 0), len(rows) - 1)]
    bindings = KeyBindings()

    @bindings.add("up")
    @bindings.add("k")
    def _up(event: Any) -> None:
        chosen[0] = max(chosen[0] - 1, 0)

    @bindings.add("down")
    @bindings.add("j")
    def _down(event: Any) -> None:
        chosen[0] = min(chosen[0] + 1, len(rows) - 1)

    @bindings.add("enter")
    def _enter(event: Any) -> None:
        event.app.exit(result=chosen[0])

    @bindings.add("escape", eager=True)
    @bindings.add("c-c")
    @bindings.add("q")
    def _cancel(event: Any) -> None:
        event.app.exit(result=None)

    def text() -> FormattedText:
        width = shutil.get_terminal_size((80, 24)).columns - 1
        first = min(max(chosen[0] - VISIBLE_ROWS + 1, 0), max(len(rows) - VISIBLE_ROWS, 0))
        lines: list[tuple[str, str]] = [("bold", f"{title}\n")]
        for index in range(first, min(first + VISIBLE_ROWS, len(rows))):
            marker, style = ("› ", "reverse") if index == chosen[0] else ("  ", "")
            lines.append((style, marker + fit_row(*rows[index], width - 2)))
            lines.append(("", "\n"))
        lines.append(("italic", f"↑/↓ move · Enter {action} · Esc cancels"))
        return FormattedText(lines)

    control = FormattedTextControl(text, focusable=True, show_cursor=False)
    app: Application[int | None] = Application(
        layout=Layout(HSplit([Window(control, dont_extend_height=True)])),
        key_bindings=bindings,
        full_screen=False,
        erase_when_done=True,
    )
    return await app.run_async()
