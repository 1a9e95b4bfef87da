"""The inline approval prompt: shows the tool, its arguments exactly (a command as a command,
a diff for edits), the risk and the reason, and takes one key: y once, s always this
session, p always in this project, n deny, d deny for the session. After a denial the user
may type a short reason for the model. Ctrl-C denies and cancels the turn."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

from agentcli.output.visible import visible
from agentcli.policy import Prompt, TurnCancelled, UserChoice
from agentcli.tools.base import Risk

KEYS = {"y": "once", "s": "session", "p": "project", "n": "deny", "d": "deny_session"}
MAX_PREVIEW_LINES = 60
MAX_CODE_LINES = 200  # of a command or code; the prompt says how many more there are


def _style(enabled: bool, code: str, text: str) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if enabled else text


def _code_lines(text: str, prefix: str) -> list[str]:
    """Every line of a command or code, control characters shown (an escape sequence or a
    CR cannot hide a line); past MAX_CODE_LINES, how much is not shown."""
    lines = visible(text).splitlines() or [""]  # after visible(), only \n splits
    shown = [prefix + line for line in lines[:MAX_CODE_LINES]]
    if len(lines) > MAX_CODE_LINES:
        rest = lines[MAX_CODE_LINES:]
        shown.append(
            f"… {len(rest)} more lines ({sum(len(x) + 1 for x in rest):,} characters) "
            "not shown: deny unless you know what they are"
        )
    return shown


def describe_call(tool: str, arguments: dict[str, Any]) -> list[str]:
    """The arguments exactly: a command as a command, code as code, others as JSON."""
    if tool == "run_shell" and "command" in arguments:
        lines = _code_lines(str(arguments["command"]), "$ ")
        extra = {k: v for k, v in arguments.items() if k != "command"}
        return lines + ([visible(json.dumps(extra, ensure_ascii=False))] if extra else [])
    if tool == "run_python" and "code" in arguments:
        return ["python:", *_code_lines(str(arguments["code"]), "  ")]
    shown = {k: v for k, v in arguments.items() if k not in ("content", "old_text", "new_text")}
    lines = [visible(json.dumps(shown, ensure_ascii=False))]
    if "content" in arguments and tool == "write_file":
        lines.append(f"({len(str(arguments['content']).encode()):,} bytes of content)")
    return lines


def render_prompt(prompt: Prompt, color: bool) -> str:
    request = prompt.request
    risk = request.assessment.risk
    colour = "31" if risk is Risk.HIGH else "33"
    name = visible(request.tool)
    where = f" · sandbox {request.sandbox}" if request.sandbox else ""
    out = [_style(color, f"1;{colour}", f"● {name} wants to run ({risk.label} risk{where})")]
    if request.description:
        lines = [visible(line) for line in request.description]
    else:
        lines = describe_call(request.tool, request.arguments)
    out += [f"  {line}" for line in lines]
    if request.preview:
        preview = visible(request.preview).splitlines()
        for line in preview[:MAX_PREVIEW_LINES]:
            code = "32" if line.startswith("+") else "31" if line.startswith("-") else "2"
            out.append("  " + _style(color, code, line))
        if len(preview) > MAX_PREVIEW_LINES:
            out.append(f"  … {len(preview) - MAX_PREVIEW_LINES} more lines")
    out.append(_style(color, "2", "  why: " + visible("; ".join(prompt.reasons))))
    if prompt.session_rules:
        rules = visible(", ".join(prompt.session_rules))
        out.append(
            f"  [y] yes once  [s] always this session ({rules})  [p] always in this project  "
            "[n] no  [d] no for this session"
        )
    else:  # no rule can describe this call safely: it is decided once
        out.append("  [y] yes once  [n] no")
    return "\n".join(out) + "\n"


class TerminalApprover:
    """Asks on the terminal. One prompt at a time is the policy's job (it holds a lock)."""

    def __init__(self, stream: TextIO | None = None, keys: Any = None, screen: Any = None) -> None:
        import asyncio

        from agentcli.ui.screen import TerminalGate

        self.stream = stream or sys.stderr
        # Shared with the renderer: its live lines wait while a prompt owns the terminal.
        self.screen = screen if screen is not None else TerminalGate()
        self.color = self.stream.isatty() and "NO_COLOR" not in os.environ
        self.keys = keys  # an EscWatcher to pause while the prompt owns the terminal
        self._one_at_a_time = asyncio.Lock()  # approvals and questions share the terminal

    async def __call__(self, prompt: Prompt) -> UserChoice:
        async with self._one_at_a_time:
            self._take_terminal()
            try:
                return await self._ask(prompt)
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
        self.stream.write(render_prompt(prompt, self.color))
        self.stream.flush()
        keys = KEYS if prompt.session_rules else {k: KEYS[k] for k in ("y", "n")}
        try:
            key = await self._read_key(keys)
        except (KeyboardInterrupt, EOFError):
            self.stream.write("  denied: cancelled\n")
            raise TurnCancelled("cancelled at the approval prompt") from None
        kind = KEYS[key]
        self.stream.write(f"  → {key}\n")
        if kind in ("deny", "deny_session"):
            reason = await self._read_reason()
            return UserChoice(kind, reason)  # type: ignore[arg-type]
        return UserChoice(kind)  # type: ignore[arg-type]

    async def _read_key(self, keys: dict[str, str]) -> str:
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

        control = FormattedTextControl(f"  choose [{'/'.join(keys)}]: ")
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


async def _prompt_async(message: str) -> str:
    """One line of input that leaves the REPL's Ctrl-C handler in place (see _read_key);
    Ctrl-C still ends the input, as a key."""
    from prompt_toolkit import PromptSession

    return await PromptSession().prompt_async(message, handle_sigint=False)
