"""`--output text`: the assistant's text on stdout as it arrives (rendered Markdown on a
terminal, plain text in a pipe); tool activity and progress on stderr."""

from __future__ import annotations

import asyncio
from typing import Any, TextIO

from agentcli.agent.waiting import retry_line, waiting_line
from agentcli.conversation import events as ev
from agentcli.conversation.fold import StreamFold
from agentcli.output import terminal
from agentcli.output.base import RunSummary
from agentcli.output.call_lines import HeldCallLines
from agentcli.output.nested_lines import SubagentCalls
from agentcli.output.results import ending_lines, preview, preview_line, result_line
from agentcli.output.state_lines import StateLines
from agentcli.output.style import Styler, format_arguments
from agentcli.output.visible import one_line, visible_event, visible_piece
from agentcli.ui.screen import TerminalGate, progress_key

RESULT_CHANGED_LINES = 8


class TextOutput:
    def __init__(
        self,
        stdout: TextIO,
        stderr: TextIO,
        *,
        markdown: bool | None = None,
        screen: TerminalGate | None = None,
    ) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self._flush_due = False  # stdout holds pieces a flush at the loop's next turn sends
        self._broken: BrokenPipeError | None = None
        self.style = Styler(terminal.color_enabled(stderr))
        self.markdown = stdout.isatty() if markdown is None else markdown
        self._stream: Any = None  # MarkdownStream while a message renders on a terminal
        self._ends_with_newline = True
        self.fold = StreamFold()
        self.calls = HeldCallLines()  # a call that asks is shown by its approval block
        self.subagent_calls = SubagentCalls()
        self._live_line = False  # a command's latest output line is on the screen
        self._block_done = False  # a block ended: the next one starts after a blank line
        self._blocks_separated = stdout.isatty() and stderr.isatty()
        self._retry_reason: str | None = None  # said once for retries in a row
        self.screen = screen if screen is not None else TerminalGate()  # the approver's too
        self.screen.on_hold(self._clear_live_line)
        self.states = StateLines()  # a flood of state changes: a few lines a second

    # stdout: the answer
    def _text(self, delta: str) -> None:
        if self.markdown:
            if self._stream is None:
                from agentcli.ui.markdown_stream import MarkdownStream

                self._stream = MarkdownStream(terminal.console(self.stdout))
            self._stream.feed(delta)
            return
        if self._broken is not None:
            raise self._broken  # stdout's reader left: said where the run can hear it
        self.stdout.write(delta)
        self._ends_with_newline = delta.endswith("\n")
        if not self._flush_due:  # once per turn of the event loop, not once per piece
            try:
                asyncio.get_running_loop().call_soon(self._flush_soon)
            except RuntimeError:
                self.stdout.flush()
            else:
                self._flush_due = True

    def _flush_soon(self) -> None:
        self._flush_due = False
        try:
            self.stdout.flush()
        except BrokenPipeError as error:  # raised in a callback, it would reach no one
            self._broken = error

    def _flush_text(self) -> None:
        """What the answer wrote so far, out before anything goes to stderr (`2>&1` keeps
        the order)."""
        if self._flush_due:
            self._flush_due = False
            self.stdout.flush()

    def _end_text(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
            self._block_done = True
        elif not self._ends_with_newline:
            self.stdout.write("\n")
            self.stdout.flush()
            self._ends_with_newline = True
            self._block_done = True

    def _separate(self, event: ev.Event) -> None:
        """On a terminal, one blank line between blocks: an answer, a tool call, a result
        (in a pipe the streams stay as they were)."""
        text = isinstance(event, ev.TextMessageContent)
        starts = isinstance(event, (ev.ToolCallEnd, ev.ToolCallResult)) or (
            text and self._stream is None and self._ends_with_newline and event.delta
        )
        if not starts:
            return
        if self._block_done and self._blocks_separated:
            stream = self.stdout if text else self.stderr
            if not text:
                self._clear_live_line()
            stream.write("\n")
        self._block_done = not text

    # stderr: what happens around the answer
    def _note(self, line: str) -> None:
        from agentcli.output.wrapping import for_stream

        self._clear_live_line()
        if (held := self.states.release()) is not None:  # the latest change, before it
            self.stderr.write(for_stream(self.style.dim(f"  state: {held}"), self.stderr) + "\n")
        self.stderr.write(for_stream(line, self.stderr) + "\n")
        self.stderr.flush()

    def _clear_live_line(self) -> None:
        if self._live_line:
            self.stderr.write("\r\x1b[2K")
            self._live_line = False

    def _show_live_line(self, lines: list[str]) -> None:
        """A running command's latest output, on one line rewritten in place (terminal only)."""
        if not lines or not terminal.can_redraw(self.stderr):
            return
        import shutil

        width = shutil.get_terminal_size((80, 24)).columns
        text = " ".join(lines[-1].split())[: max(width - 6, 10)]
        self.stderr.write("\r\x1b[2K" + self.style.dim(f"  │ {text}"))
        self.stderr.flush()
        self._live_line = True

    def handle(self, event: ev.Event) -> None:
        if type(event) is ev.TextMessageContent and not self._block_done and not self.screen.held:
            self._text(self.fold.apply(visible_piece(event)).delta)  # a piece: nothing else
            return
        self._flush_text()
        if self.screen.defer(lambda: self.handle(event), progress_key(event)):
            return  # a prompt owns the terminal: drawn once it is answered
        event = self.fold.apply(visible_event(event))  # control characters shown, never obeyed
        for line in [*self.calls.release(event), *ending_lines(self.fold, event, self.style)]:
            self._note(line)
        self._separate(event)
        if isinstance(event, ev.TextMessageContent):
            self._text(event.delta)
        elif isinstance(event, (ev.TextMessageEnd, ev.ToolCallStart)):
            self._end_text()
        elif isinstance(event, ev.ToolCallEnd):
            call = self.fold.call(event.tool_call_id)
            name, raw = (call.name, call.arguments_text) if call else ("?", "")
            line = (
                self.style.dim("→ ") + f"{one_line(name)} " + self.style.dim(format_arguments(raw))
            )
            self.calls.hold(event.tool_call_id, line)
        elif isinstance(event, ev.ToolCallResult):
            self._result(event)
        elif isinstance(event, ev.ReasoningMessageContent):
            self._clear_live_line()  # the model's thinking: dimmed, on stderr
            self.stderr.write(self.style.dim(event.delta))
            self.stderr.flush()
        elif isinstance(event, ev.ReasoningMessageEnd):
            self.stderr.write("\n")
        elif isinstance(event, (ev.StateSnapshot, ev.StateDelta)):
            if (line := self.states.take(event)) is not None:
                self._note(self.style.dim(f"  state: {line}"))
        elif isinstance(event, ev.Progress):
            self._show_live_line(event.lines or [])
        elif getattr(event, "name", None) == "waiting":
            value = event.value if isinstance(event.value, dict) else {}
            self._note(self.style.yellow(f"agentcli: {waiting_line(value)}"))
        elif isinstance(event, ev.Retry):
            self._note(self.style.yellow(retry_line(event, self._retry_reason)))
            self._retry_reason = event.reason

    def nested(self, event: ev.Event) -> None:
        """A subagent's event: a line for each of its calls that has its result."""
        self._flush_text()
        if self.screen.defer(lambda: self.nested(event)):
            return
        line = self.subagent_calls.line(visible_event(event), self.style)
        if line is not None:
            self._note(line)

    def _result(self, event: ev.ToolCallResult) -> None:
        call = self.fold.calls[event.tool_call_id]
        self._note(result_line(call, self.style))
        if call.state != "error":  # an edit's changed lines; other results stay one line
            for line in preview(event.content, RESULT_CHANGED_LINES, diff_only=True):
                self._note(preview_line(line, self.style, diff=True))

    def finish(self, summary: RunSummary) -> None:
        self._flush_text()
        if (held := self.states.release()) is not None:
            self._note(self.style.dim(f"  state: {held}"))
        for line in self.calls.flush():
            self._note(line)
        self._clear_live_line()  # the terminal is not left in the middle of a line
        self._end_text()
