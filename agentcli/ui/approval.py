"""The inline approval prompt: one block (see approval_block) showing the call exactly and
offering choices whose labels say what they grant; one key answers (y yes, s this session,
p this project, n no, d no for the session, v shows a long file or diff page by page
first). After a denial the user may type a short reason for the model. Ctrl-C denies and
cancels the turn. In the REPL (given `folds`) the answered block is erased and replaced by
one line (agentcli.ui.approval_fold), the block kept behind Ctrl-O and `/expand N`."""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TextIO, TypeVar

from agentcli.output import terminal
from agentcli.output.visible import one_line as visible_line
from agentcli.output.visible import visible
from agentcli.policy.engine import Prompt, TurnCancelled, UserChoice
from agentcli.ui.approval_block import (
    HEADERS,
    choice_lines,
    fit_preview_line,
    granted,
    preview_lines,
    prompt_choices,
    render_prompt,
    terminal_width,
)
from agentcli.ui.approval_fold import cut, folded_line, lines_of_block, rows_of, title
from agentcli.ui.folds import FoldedItems

T = TypeVar("T")


def _style(enabled: bool, code: str, text: str) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if enabled else text


def terminal_approver(screen: Any = None) -> TerminalApprover | None:
    """The approver of a one-shot run: someone can answer only when stdin is a terminal.
    `screen`: the front end's TerminalGate, shared with its renderer."""
    if sys.stdin is None or not sys.stdin.isatty():
        return None
    return TerminalApprover(screen=screen)


class TerminalApprover:
    """Asks on the terminal. One prompt at a time is the policy's job (it holds a lock)."""

    def __init__(
        self,
        stream: TextIO | None = None,
        keys: Any = None,
        screen: Any = None,
        folds: FoldedItems | None = None,
    ) -> None:
        import asyncio

        from agentcli.ui.screen import TerminalGate

        self.stream = stream or sys.stderr
        # Shared with the renderer: its live lines wait while a prompt owns the terminal.
        self.screen = screen if screen is not None else TerminalGate()
        self.color = terminal.color_enabled(self.stream)
        self.keys = keys  # an EscWatcher to pause while the prompt owns the terminal
        self._one_at_a_time = asyncio.Lock()  # approvals and questions share the terminal
        self.folds = folds  # set: answered blocks fold into one line (the REPL)

    async def __call__(self, prompt: Prompt) -> UserChoice:
        return await self._holding_terminal(lambda: self._ask(prompt))

    async def _holding_terminal(self, ask: Callable[[], Awaitable[T]]) -> T:
        """One prompt at a time, owning the terminal while it is up."""
        async with self._one_at_a_time:
            self._take_terminal()
            try:
                return await ask()
            finally:
                self._give_back_terminal()

    async def question(self, text: str, choices: list[str] | None) -> str:
        """ask_user: the model's question, answered here. Ctrl-C cancels the turn."""

        async with self._one_at_a_time:
            self._take_terminal()
            try:
                self.stream.write(_style(self.color, "1;36", f"? {visible(text)}") + "\n")
                for number, choice in enumerate(choices or [], start=1):
                    self.stream.write(f"  {number}. {visible(choice)}\n")
                self.stream.flush()
                hint = "  number or text: " if choices else "  answer: "
                while True:
                    try:
                        answer = (await _prompt_async(hint)).strip()
                    except (KeyboardInterrupt, EOFError):
                        raise TurnCancelled("cancelled at a question") from None
                    if not choices:
                        return answer
                    if answer.isdigit() and 1 <= int(answer) <= len(choices):
                        return choices[int(answer) - 1]
                    if answer in choices:
                        return answer
                    self.stream.write(f"  choose 1-{len(choices)} or type one of the choices\n")
            finally:
                self._give_back_terminal()

    async def elicit(self, request: Any) -> Any:
        """An MCP server's form (agentcli.mcp.client_features.FormRequest), asked here."""
        from agentcli.ui.mcp_requests import ask_form

        return await self._holding_terminal(lambda: ask_form(self, request))

    async def approve_sampling(self, request: Any) -> str:
        """An MCP server's sampling request: "once", "session" or "deny"."""
        from agentcli.ui.mcp_requests import ask_sampling

        return await self._holding_terminal(lambda: ask_sampling(self, request))

    async def read_line(self, message: str) -> str:
        """One line typed (an MCP form's field), while a prompt holds the terminal."""
        return await _prompt_async(message)

    async def read_key(self, keys: list[str]) -> str:
        """One of `keys` pressed, while a prompt holds the terminal."""
        return await self._read_key(keys)

    def _take_terminal(self) -> None:
        """The prompt owns the terminal: no Esc watching, no live lines drawn over it."""
        self.screen.hold()
        if self.keys is not None:
            self.keys.pause()

    def _give_back_terminal(self) -> None:
        if self.keys is not None:
            self.keys.resume()
        self.screen.release()

    async def _ask(self, prompt: Prompt) -> UserChoice:
        width = terminal_width(self.stream)
        offer = prompt_choices(prompt)
        block = render_prompt(prompt, self.color, width)
        drawn = BlockRows(self.stream, rows_of(block, width)) if self.folds is not None else None
        self.stream.write(block)
        self.stream.flush()
        keys = {choice.key: choice for choice in offer}
        while True:
            try:
                choice = keys[await self._read_key(list(keys), erase=drawn is not None)]
                if choice.kind is not None:
                    break
                if drawn is not None:
                    drawn.rows = None  # paged: more than a screen, left as it is
                await self._page(preview_lines(prompt))  # then the same choices again
                self.stream.write("\n".join(choice_lines(offer, width, self.color)) + "\n")
            except (KeyboardInterrupt, EOFError):
                if drawn is None:
                    self.stream.write("  denied: cancelled\n")
                else:
                    self._fold(prompt, "cancelled", drawn)
                raise TurnCancelled("cancelled at the approval prompt") from None
        if drawn is None:
            self.stream.write(f"  → {choice.key}: {granted(choice)}\n")
        else:
            drawn.erase()
        reason = ""
        if choice.kind in ("deny", "deny_session"):
            reason = await self._read_reason(erase=drawn is not None)
        if drawn is not None:
            self._fold(prompt, choice.kind, drawn, reason)
        if choice.kind in ("deny", "deny_session"):
            return UserChoice(choice.kind, reason)
        return UserChoice(choice.kind)  # type: ignore[arg-type]

    def _fold(self, prompt: Prompt, outcome: str, drawn: BlockRows, reason: str = "") -> None:
        """The answered block off the screen (when it is all there still), its line in
        its place, and the block kept for Ctrl-O and /expand."""
        assert self.folds is not None
        drawn.erase()
        width = terminal_width(self.stream)
        number = self.folds.next_number()
        line = folded_line(prompt, outcome, number, width, self.color)
        self.stream.write(line + "\n")
        if reason:
            told = cut(f"    told the model: {visible_line(reason)}", width - 1)
            self.stream.write(_style(self.color, "2", told) + "\n")
        self.stream.flush()
        self.folds.add(title(prompt, outcome), lines_of_block(prompt, self.color))

    async def _page(self, lines: list[str]) -> None:
        """The whole preview, a screenful at a time: space or Enter for more, q to stop.
        Lines are counted as the block counts them: the file's or the diff's own, not the
        preview's header lines (`new file …`, `@@ …`)."""
        height = max(_terminal_rows(self.stream) - 2, 5)
        width = terminal_width(self.stream)
        counted = list(itertools.accumulate(not line.startswith(HEADERS) for line in lines))
        total = counted[-1] if counted else 0
        shown = 0
        for start in range(0, len(lines), height):
            for line in lines[start : start + height]:
                self.stream.write("\n".join(fit_preview_line(line, width, self.color)) + "\n")
            end = min(start + height, len(lines))
            shown = counted[end - 1] if end else 0
            if end == len(lines):
                break
            self.stream.flush()
            first = counted[start - 1] + 1 if start else 1
            where = f"  lines {first:,}-{shown:,} of {total:,}: space for more, q to stop "
            if await self._read_key([" ", "enter", "q"], where) == "q":
                break
        said = (
            f"(all {total:,} lines shown)"
            if shown == total
            else (f"(stopped after line {shown:,} of {total:,})")
        )
        self.stream.write(_style(self.color, "2", f"  {said}") + "\n")

    async def _read_key(
        self, keys: list[str], message: str | None = None, *, erase: bool = False
    ) -> str:
        from prompt_toolkit.application import Application
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.layout import FormattedTextControl, Layout, Window

        bindings = KeyBindings()
        for key in keys:

            @bindings.add(key)
            def _choose(event: Any, key: str = key) -> None:
                event.app.exit(result=key)

        @bindings.add("c-c")
        @bindings.add("c-d")
        def _cancel(event: Any) -> None:
            event.app.exit(exception=KeyboardInterrupt())

        control = FormattedTextControl(message or f"  choose [{'/'.join(keys)}]: ")
        app: Application[str] = Application(
            layout=Layout(Window(control, height=1)),
            key_bindings=bindings,
            full_screen=False,
            erase_when_done=erase,  # folding: the block's rows are all that is left to erase
        )
        # handle_sigint=False: Ctrl-C is a key here, and prompt_toolkit's own SIGINT handler
        # would remove the REPL's when it ends, so Ctrl-C during the tool that then runs
        # would be ignored.
        return await app.run_async(handle_sigint=False)

    async def _read_reason(self, *, erase: bool = False) -> str:
        try:
            text = await _prompt_async("  reason for the model (Enter to skip): ", erase=erase)
        except (KeyboardInterrupt, EOFError):
            return ""
        return text.strip()


def _terminal_rows(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).lines
    except (OSError, ValueError, AttributeError):
        return 24


async def _prompt_async(message: str, *, erase: bool = False) -> str:
    """One line of input that leaves the REPL's Ctrl-C handler in place (see _read_key);
    Ctrl-C still ends the input, as a key. `erase`: the line goes once answered."""
    from prompt_toolkit import PromptSession

    session: PromptSession[str] = PromptSession(erase_when_done=erase)
    return await session.prompt_async(message, handle_sigint=False)


class BlockRows:
    """The rows an approval block took, to erase it once answered: only while all of it
    is on the screen, at the size it was drawn at (a resize reflows or cuts rows in ways
    the block cannot know, so it is left as it is)."""

    def __init__(self, stream: TextIO, rows: int) -> None:
        self.stream = stream
        self.rows: int | None = rows
        self.size = _size(stream)

    def erase(self) -> None:
        rows, self.rows = self.rows, None  # once
        size = _size(self.stream)
        if not rows or size is None or size != self.size or not terminal.can_redraw(self.stream):
            return
        if rows >= size[1]:  # its first rows are above the screen already
            return
        self.stream.write(f"\x1b[{rows}A\r\x1b[J")  # up to its first row; the rest cleared


def _size(stream: TextIO) -> tuple[int, int] | None:
    try:
        size = os.get_terminal_size(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return None
    return size.columns, size.lines
