"""How the REPL shows a turn: a spinner until the first token, the answer as streamed
Markdown, each tool call with its arguments as they form and then its state, long results
collapsed to a few lines, and a dim footer with tokens and time. It only consumes events.
Given `folds`, a step's read-only calls are one summary line (agentcli.ui.read_fold), kept
behind Ctrl-O and /expand."""

from __future__ import annotations

import time
from typing import Any, TextIO

from agentcli.agent.waiting import retry_line, waiting_line
from agentcli.conversation import events as ev
from agentcli.conversation.error_kinds import DENIED, INVALID
from agentcli.conversation.fold import StreamFold
from agentcli.output import terminal
from agentcli.output.base import RunSummary
from agentcli.output.call_lines import HeldCallLines
from agentcli.output.nested_lines import SubagentCalls
from agentcli.output.notices import mcp_notice
from agentcli.output.results import changed_lines, ending_lines, preview, preview_line, result_line
from agentcli.output.state_lines import StateLines
from agentcli.output.style import Styler, format_arguments
from agentcli.output.visible import one_line, visible, visible_event, visible_piece
from agentcli.ui.folds import FoldedItems
from agentcli.ui.read_fold import StepReads, read_only
from agentcli.ui.screen import TerminalGate, progress_key

RESULT_PREVIEW_LINES = 4
EXPANDED_PREVIEW_LINES = 40  # of a folded read-only result, when expanded


class ReplRenderer:
    def __init__(
        self, stream: TextIO, screen: TerminalGate | None = None, folds: FoldedItems | None = None
    ) -> None:
        self.stream = stream
        self._console: Any = None  # rich's, made when first needed: the prompt does not wait
        self.style = Styler(terminal.color_enabled(stream))
        self._markdown: Any = None
        self._spinner: Any = None
        self.fold = StreamFold()
        self.states = StateLines()
        self.calls = HeldCallLines()  # a call that asks is shown by its approval block
        self.subagent_calls = SubagentCalls()
        self._started = time.monotonic()
        self._live_line = False
        self._block_done = False  # a block ended: the next one starts after a blank line
        self._retry_reason: str | None = None  # said once for retries in a row
        self.screen = screen if screen is not None else TerminalGate()  # the approver's too
        self.screen.on_hold(self._clear_live_line)
        self.folds = folds
        self.reads = StepReads()  # the step's read-only calls, drawn as one line
        self.screen.on_hold(self._flush_reads)  # before a prompt: what came first, first
        # The REPL's prompt, while it waits for a line: news between turns (an MCP
        # server's log) is drawn above it, and the prompt drawn again below.
        self.idle_prompt: Any = None

    @property
    def console(self) -> Any:
        if self._console is None:
            self._console = terminal.console(self.stream, highlight=False)
        return self._console

    @console.setter
    def console(self, console: Any) -> None:
        self._console = console

    # --- the spinner, until something arrives

    def _spin(self) -> None:
        if self._spinner is None and terminal.can_redraw(self.stream):
            self._spinner = self.console.status("thinking…", spinner="dots")
            self._spinner.start()

    def _stop_spin(self) -> None:
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None

    # --- lines under the answer

    def _fit(self, text: str) -> str:
        """On a terminal, a line longer than it broken between words (its own wrap would
        cut one in two); to a pipe, as it is."""
        from agentcli.output.wrapping import for_stream

        return for_stream(text, self.stream)

    def _line(self, text: str) -> None:
        self._flush_reads()
        self._stop_spin()
        self._clear_live_line()
        if (held := self.states.release()) is not None:  # the latest change, before it
            self.stream.write(self._fit(self.style.dim(f"  state: {held}")) + "\n")
        self.stream.write(self._fit(text) + "\n")
        self.stream.flush()

    def fitted(self, text: str) -> None:
        """A line of the REPL's own (a folded item expanded), broken between words."""
        self.stream.write(self._fit(text) + "\n")
        self.stream.flush()

    def _flush_reads(self) -> None:
        """The read-only calls done so far in this step, as their one summary line."""
        taken = self.reads.take() if self.folds is not None else None
        if taken is None:
            return
        said, lines = taken
        number = self.folds.add(f"✓ {said}", lambda width: lines)  # type: ignore[union-attr]
        self._stop_spin()
        self._clear_live_line()
        hint = self.style.dim(f" (ctrl+o to expand · /expand {number})")
        self.stream.write(self._fit(self.style.green("  ✓ ") + said + hint) + "\n")
        self.stream.flush()

    def _folded_read(self, event: ev.Event) -> bool:
        """A read-only call's event that the step's summary line stands for: True when
        nothing more is to be drawn for it."""
        call_id = getattr(event, "tool_call_id", None)
        if self.folds is None or call_id is None:
            return False
        call = self.fold.call(call_id)
        if isinstance(event, ev.Approval) and call is not None and read_only(call.approval):
            self.reads.hold(call_id, self.calls.take(call_id))
            return True
        if not isinstance(event, ev.ToolCallResult) or not self.reads.holds(call_id):
            return False
        assert call is not None
        if call.state == "error":  # news: shown as ever, its call line first
            line = self.reads.drop(call_id)
            if line:
                self._line(line)
            self._result(event)
            self._block_done = True
            return True
        diff = changed_lines(event.content) is not None
        shown = preview(event.content, EXPANDED_PREVIEW_LINES)
        lines = [
            result_line(call, self.style),
            *(preview_line(x, self.style, diff=diff) for x in shown),
        ]
        self.reads.finished(call_id, call.name, lines)
        return True

    def _between_turns(self, line: str) -> None:
        """A line that may come while the prompt waits: drawn above it, not into it."""
        app = getattr(self.idle_prompt, "app", None)
        if app is None or not app.is_running:
            self._line(line)
            return
        from prompt_toolkit.application import run_in_terminal
        from prompt_toolkit.application.current import set_app

        with set_app(app):  # (the news comes from a task the prompt's context never reached)
            run_in_terminal(lambda: self._line(line))

    def _clear_live_line(self) -> None:
        if self._live_line:
            self.stream.write("\r\x1b[2K")
            self._live_line = False

    def _show_live_line(self, text: str) -> None:
        if not terminal.can_redraw(self.stream):
            return
        import shutil

        width = shutil.get_terminal_size((80, 24)).columns
        shown = " ".join(text.split())[: max(width - 6, 10)]
        self.stream.write("\r\x1b[2K" + self.style.dim(f"  │ {shown}"))
        self.stream.flush()
        self._live_line = True

    def aside(self, line: str) -> None:
        """A line of the REPL's own while a turn draws (a message queued): above the open
        answer's live region, or where the spinner or a live line is, which come back."""
        if self._markdown is not None:
            self._markdown.interject(line)
            return
        spinning = self._spinner is not None
        self._line(line)  # takes the spinner and the live line off first
        if spinning:
            self._spin()

    def _end_text(self) -> None:
        if self._markdown is not None:
            self._markdown.close()
            self._markdown = None
            self._block_done = True

    def _separate(self, event: ev.Event) -> None:
        """One blank line between blocks: an answer, a tool call, a result."""
        starts = isinstance(event, (ev.ToolCallEnd, ev.ToolCallResult)) or (
            isinstance(event, ev.TextMessageContent) and self._markdown is None and event.delta
        )
        if starts:
            self._flush_reads()
        if starts and self._block_done and not self._answered_here(event):
            self._stop_spin()
            self._clear_live_line()
            self.stream.write("\n")
        if starts:
            self._block_done = not isinstance(event, ev.TextMessageContent)

    def _answered_here(self, event: ev.Event) -> bool:
        """A result right under its folded approval line: no blank line between them."""
        if self.folds is None or not isinstance(event, ev.ToolCallResult):
            return False
        call = self.fold.call(event.tool_call_id)
        return call is not None and (call.approval or {}).get("by") == "user"

    # --- events

    def handle(self, event: ev.Event) -> None:
        streaming = self._markdown is not None and type(event) is ev.TextMessageContent
        if streaming and not self.screen.held:
            self._markdown.feed(self.fold.apply(visible_piece(event)).delta)  # a piece, only
            return
        if self.screen.defer(lambda: self.handle(event), progress_key(event)):
            return  # a prompt owns the terminal: drawn once it is answered
        event = self.fold.apply(visible_event(event))  # control characters shown, never obeyed
        if self._folded_read(event):
            return
        if isinstance(event, ev.StepFinished):
            self._flush_reads()
        for line in [*self.calls.release(event), *ending_lines(self.fold, event, self.style)]:
            self._line(line)
        self._separate(event)
        if isinstance(event, ev.RunStarted):
            self._started = time.monotonic()
            self._block_done = False
            self._spin()
        elif isinstance(event, ev.StepStarted):
            self._spin()
        elif isinstance(event, ev.TextMessageContent):
            self._stop_spin()
            if self._markdown is None:
                from agentcli.ui.markdown_stream import MarkdownStream

                self._markdown = MarkdownStream(self.console)
            self._markdown.feed(event.delta)
        elif isinstance(event, ev.TextMessageEnd):
            self._end_text()
        elif isinstance(event, ev.ToolCallStart):
            self._stop_spin()
            self._end_text()
            self._show_live_line(f"{one_line(event.tool_call_name)} …")
        elif isinstance(event, ev.ToolCallArgs):
            call = self.fold.call(event.tool_call_id)
            if call is not None and len(call.parts) % 8 == 1:  # redrawn now and then, not per token
                self._show_live_line(f"{one_line(call.name)} {call.arguments_text[-200:]}")
        elif isinstance(event, ev.ToolCallEnd):
            call = self.fold.call(event.tool_call_id)
            name, raw = (call.name, call.arguments_text) if call else ("?", "")
            line = (
                self.style.dim("● ") + one_line(name) + " " + self.style.dim(format_arguments(raw))
            )
            self.calls.hold(event.tool_call_id, line)
        elif isinstance(event, ev.ToolCallResult):
            self._result(event)
        elif isinstance(event, ev.ReasoningMessageContent):
            self._stop_spin()
            self._clear_live_line()
            self.stream.write(self.style.dim(event.delta))  # the model's thinking, dimmed
            self.stream.flush()
        elif isinstance(event, ev.ReasoningMessageEnd):
            self.stream.write("\n")
        elif isinstance(event, (ev.StateSnapshot, ev.StateDelta)):
            self._state(event)
        elif isinstance(event, ev.Custom):
            self._custom(event)

    def nested(self, event: ev.Event) -> None:
        """A subagent's event: a line for each of its calls that has its result."""
        if self.screen.defer(lambda: self.nested(event)):
            return
        line = self.subagent_calls.line(visible_event(event), self.style)
        if line is not None:
            self._line(line)

    def _custom(self, event: ev.Custom) -> None:
        if isinstance(event, ev.ToolState):
            name = self.fold.name_of(event.tool_call_id)
            if event.state == "running":
                self._show_live_line(f"{name}: running")
        elif isinstance(event, ev.Progress):
            if event.lines:
                self._show_live_line(f"{self.fold.name_of(event.tool_call_id)}: {event.lines[-1]}")
        elif getattr(event, "name", None) == "waiting":
            line = waiting_line(event.value if isinstance(event.value, dict) else {})
            if self._spinner is not None:
                self._spinner.update(line)
            else:
                self._line(self.style.yellow(f"  {line}"))
        elif isinstance(event, ev.Retry):
            self._line(self.style.yellow(f"  {retry_line(event, self._retry_reason)}"))
            self._retry_reason = event.reason
        elif isinstance(event, ev.Compacting):
            self._line(self.style.yellow(f"  {event.notice}"))
        elif isinstance(event, ev.Compaction):
            self._line(
                self.style.dim(
                    f"  compacted: {event.summarised_messages} earlier messages summarised"
                )
            )
        elif isinstance(event, ev.RunWarning):
            self._line(self.style.yellow(f"  warning: {one_line(event.message)}"))
        elif isinstance(event, (ev.McpLog, ev.McpRequest)):
            line = mcp_notice(event)
            if line:
                self._between_turns(self.style.dim(f"  {line}"))

    def _state(self, event: ev.StateSnapshot | ev.StateDelta) -> None:
        if (line := self.states.take(event)) is not None:  # a flood: a few lines a second
            self._line(self.style.dim(f"  state: {line}"))

    def _result(self, event: ev.ToolCallResult) -> None:
        call = self.fold.calls[event.tool_call_id]
        self._line(result_line(call, self.style))
        if call.state == "error" and (
            call.error_kind in (DENIED, INVALID) or event.content.strip() == str(call.error).strip()
        ):
            return  # said on the line above; an invalid call's text is the model's
        diff = changed_lines(event.content) is not None
        for line in preview(event.content, RESULT_PREVIEW_LINES):
            self.stream.write(self._fit(preview_line(line, self.style, diff=diff)) + "\n")

    def finish(self, summary: RunSummary) -> None:
        self._flush_reads()
        if (held := self.states.release()) is not None:
            self._line(self.style.dim(f"  state: {held}"))
        for line in self.calls.flush():
            self._line(line)
        self._stop_spin()
        self._end_text()
        self._clear_live_line()
        usage = summary.usage
        took = time.monotonic() - self._started
        state = {"cancelled": " · interrupted", "error": " · failed"}.get(summary.status, "")
        self.stream.write(
            self.style.dim(
                f"↑ {usage.input_tokens:,} in · ↓ {usage.output_tokens:,} out · {took:.1f}s{state}"
            )
            + "\n"
        )
        if summary.error and summary.status not in ("cancelled", "finished"):
            self.stream.write(self._fit(self.style.red(f"error: {visible(summary.error)}")) + "\n")
        self.stream.flush()
