"""How the REPL shows a turn: a spinner until the first token, the answer as streamed
Markdown, each tool call with its arguments as they form and then its state, long results
collapsed to a few lines, and a dim footer with tokens and time. It only consumes events."""

from __future__ import annotations

import os
import time
from typing import Any, TextIO

from agentcli import events as ev
from agentcli.output.base import RunSummary
from agentcli.output.text import Styler, format_arguments
from agentcli.output.visible import visible, visible_event
from agentcli.ui.screen import SCREEN, progress_key

RESULT_PREVIEW_LINES = 4


class ReplRenderer:
    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console

        self.stream = stream
        no_color = "NO_COLOR" in os.environ
        self.console = Console(file=stream, no_color=no_color, highlight=False)
        self.style = Styler(stream.isatty() and not no_color)
        self._markdown: Any = None
        self._spinner: Any = None
        self._calls: dict[str, tuple[str, list[str]]] = {}
        self._started = time.monotonic()
        self._live_line = False
        SCREEN.on_hold(self._clear_live_line)

    # --- the spinner, until something arrives

    def _spin(self) -> None:
        if self._spinner is None and self.stream.isatty():
            self._spinner = self.console.status("thinking…", spinner="dots")
            self._spinner.start()

    def _stop_spin(self) -> None:
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None

    # --- lines under the answer

    def _line(self, text: str) -> None:
        self._stop_spin()
        self._clear_live_line()
        self.stream.write(text + "\n")
        self.stream.flush()

    def _clear_live_line(self) -> None:
        if self._live_line:
            self.stream.write("\r\x1b[2K")
            self._live_line = False

    def _show_live_line(self, text: str) -> None:
        if not self.stream.isatty():
            return
        import shutil

        width = shutil.get_terminal_size((80, 24)).columns
        shown = " ".join(text.split())[: max(width - 6, 10)]
        self.stream.write("\r\x1b[2K" + self.style.dim(f"  │ {shown}"))
        self.stream.flush()
        self._live_line = True

    def _end_text(self) -> None:
        if self._markdown is not None:
            self._markdown.close()
            self._markdown = None

    # --- events

    def handle(self, event: ev.Event) -> None:
        if SCREEN.defer(lambda: self.handle(event), progress_key(event)):
            return  # a prompt owns the terminal: drawn once it is answered
        event = visible_event(event)  # control characters shown, never obeyed
        if isinstance(event, ev.RunStarted):
            self._started = time.monotonic()
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
            self._calls[event.tool_call_id] = (event.tool_call_name, [])
            self._show_live_line(f"{event.tool_call_name} …")
        elif isinstance(event, ev.ToolCallArgs):
            name, parts = self._calls[event.tool_call_id]
            parts.append(event.delta)
            if len(parts) % 8 == 1:  # the arguments as they form, without redrawing per token
                self._show_live_line(f"{name} {''.join(parts)[-200:]}")
        elif isinstance(event, ev.ToolCallEnd):
            name, parts = self._calls.get(event.tool_call_id, ("?", []))
            self._line(
                self.style.dim("● ") + name + " " + self.style.dim(format_arguments("".join(parts)))
            )
        elif isinstance(event, ev.ToolCallResult):
            self._result(event)
        elif isinstance(event, ev.ReasoningMessageContent):
            self._stop_spin()
            self._clear_live_line()
            self.stream.write(self.style.dim(event.delta))  # the model's thinking, dimmed
            self.stream.flush()
        elif isinstance(event, ev.ReasoningMessageEnd):
            self.stream.write("\n")
        elif isinstance(event, ev.Custom):
            self._custom(event)

    def _name(self, call_id: str) -> str:
        return self._calls.get(call_id, ("?", []))[0]

    def _custom(self, event: ev.Custom) -> None:
        value = event.value if isinstance(event.value, dict) else {}
        call = value.get("toolCallId", "")
        if event.name == "tool_state" and value.get("state") == "waiting for approval":
            self._line(self.style.yellow(f"  … {self._name(call)}: waiting for approval"))
        elif event.name == "tool_state" and value.get("state") == "running":
            self._show_live_line(f"{self._name(call)}: running")
        elif event.name == "progress":
            lines = value.get("lines") or []
            if lines:
                self._show_live_line(f"{self._name(call)}: {lines[-1]}")
        elif event.name == "retry":
            self._line(self.style.yellow(
                f"  retrying in {value.get('delaySeconds', 0):.1f}s: {value.get('reason', '')}"
            ))  # fmt: skip
        elif event.name == "compaction":
            self._line(self.style.dim(
                f"  compacted: {value.get('summarisedMessages')} earlier messages summarised"
            ))  # fmt: skip
        elif event.name == "warning":
            self._line(self.style.yellow(f"  warning: {value.get('message')}"))

    def _result(self, event: ev.ToolCallResult) -> None:
        meta = event.metadata or {}
        name = self._calls.pop(event.tool_call_id, ("?", []))[0]
        took = self.style.dim(f" ({meta['latencyMs']} ms)") if "latencyMs" in meta else ""
        if "error" in meta:
            denied = str(meta["error"]).startswith("denied")
            label = "denied" if denied else "failed"
            first = str(meta["error"]).splitlines()[0]
            self._line(self.style.red(f"  ✗ {name} {label}: {first}") + took)
            return
        self._line(self.style.green("  ✓ ") + f"{name}: {meta.get('summary') or 'done'}" + took)
        lines = event.content.splitlines()
        for line in lines[:RESULT_PREVIEW_LINES]:
            self.stream.write(self.style.dim(f"    {line[:160]}") + "\n")
        if len(lines) > RESULT_PREVIEW_LINES:
            more = len(lines) - RESULT_PREVIEW_LINES
            self.stream.write(self.style.dim(f"    … {more} more lines") + "\n")

    def finish(self, summary: RunSummary) -> None:
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
            self.stream.write(self.style.red(f"error: {visible(summary.error)}") + "\n")
        self.stream.flush()
