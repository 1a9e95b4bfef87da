"""The inline approval prompt: one block (see approval_block) showing the call exactly and
offering choices whose labels say what they grant; one key answers (y yes, s this session,
p this project, n no, d no for the session, v shows a long file or diff page by page
first). After a denial the user may type a short reason for the model. Ctrl-C denies and
cancels the turn."""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TextIO, TypeVar

from agentcli.output import terminal
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

    def __init__(self, stream: TextIO | None = None, keys: Any = None, screen: Any = None) -> None:
        import asyncio

        from agentcli.ui.screen import TerminalGate

        self.stream = stream or sys.stderr
        # Shared with the renderer: its live lines wait while a prompt owns the terminal.
        self.screen = screen if screen is not None else TerminalGate()
        self.color = terminal.color_enabled(self.stream)
        self.keys = keys  # an EscWatcher to pause while the prompt owns the terminal
        self._one_at_a_time = asyncio.Lock()  # approvals and questions share the terminal

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
        self.stream.write(render_prompt(prompt, self.color, width))
        self.stream.flush()
        keys = {choice.key: choice for choice in offer}
        while True:
            try:
                choice = keys[await self._read_key(list(keys))]
                if choice.kind is not None:
                    break
                await self._page(preview_lines(prompt))  # then the same choices again
                self.stream.write("\n".join(choice_lines(offer, width, self.color)) + "\n")
            except (KeyboardInterrupt, EOFError):
                self.stream.write("  denied: cancelled\n")
                raise TurnCancelled("cancelled at the approval prompt") from None
        self.stream.write(f"  → {choice.key}: {granted(choice)}\n")
        if choice.kind in ("deny", "deny_session"):
            reason = await self._read_reason()
            return UserChoice(choice.kind, reason)
        return UserChoice(choice.kind)  # type: ignore[arg-type]

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

    async def _read_key(self, keys: list[str], message: str | None = None) -> str:
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
            layout=Layout(Window(control, height=1)), key_bindings=bindings, full_screen=False
        )
        # handle_sigint=False: Ctrl-C is a key here, and prompt_toolkit's own SIGINT handler
        # would remove the REPL's when it ends, so Ctrl-C during the tool that then runs
        # would be ignored.
        return await app.run_async(handle_sigint=False)

    async def _read_reason(self) -> str:

        try:
            text = await _prompt_async("  reason for the model (Enter to skip): ")
        except (KeyboardInterrupt, EOFError):
            return ""
        return text.strip()


def _terminal_rows(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).lines
    except (OSError, ValueError, AttributeError):
        return 24


async def _prompt_async(message: str) -> str:
    """One line of input that leaves the REPL's Ctrl-C handler in place (see _read_key);
    Ctrl-C still ends the input, as a key."""
    from prompt_toolkit import PromptSession

    return await PromptSession().prompt_async(message, handle_sigint=False)
