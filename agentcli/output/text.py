"""`--output text`: the assistant's text on stdout as it arrives (rendered Markdown on a
terminal, plain text in a pipe); tool activity and progress on stderr."""

from __future__ import annotations

import json
import os
from typing import Any, TextIO

from agentcli import events as ev
from agentcli.output.base import RunSummary
from agentcli.output.visible import visible, visible_event
from agentcli.ui.screen import SCREEN, progress_key

_MAX_ARGS_SHOWN = 160


def color_enabled(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


class Styler:
    """ANSI styling for stderr lines, or none at all when not on a colour terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def red(self, text: str) -> str:
        return self._wrap("31", text)

    def green(self, text: str) -> str:
        return self._wrap("32", text)

    def yellow(self, text: str) -> str:
        return self._wrap("33", text)


def format_arguments(raw: str) -> str:
    try:
        args = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        shown = raw
    else:
        if isinstance(args, dict):
            shown = " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
        else:
            shown = json.dumps(args, ensure_ascii=False)
    shown = visible(" ".join(shown.split()))
    if len(shown) > _MAX_ARGS_SHOWN:
        shown = shown[: _MAX_ARGS_SHOWN - 1] + "…"
    return shown


class TextOutput:
    def __init__(self, stdout: TextIO, stderr: TextIO, *, markdown: bool | None = None) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.style = Styler(color_enabled(stderr))
        self.markdown = stdout.isatty() if markdown is None else markdown
        self._stream: Any = None  # MarkdownStream while a message renders on a terminal
        self._ends_with_newline = True
        self._calls: dict[str, tuple[str, list[str]]] = {}
        self._live_line = False  # a command's latest output line is on the screen
        SCREEN.on_hold(self._clear_live_line)

    # stdout: the answer
    def _text(self, delta: str) -> None:
        if self.markdown:
            if self._stream is None:
                from rich.console import Console

                from agentcli.ui.markdown_stream import MarkdownStream

                console = Console(file=self.stdout, no_color="NO_COLOR" in os.environ)
                self._stream = MarkdownStream(console)
            self._stream.feed(delta)
            return
        self.stdout.write(delta)
        self.stdout.flush()
        self._ends_with_newline = delta.endswith("\n")

    def _end_text(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        elif not self._ends_with_newline:
            self.stdout.write("\n")
            self.stdout.flush()
            self._ends_with_newline = True

    # stderr: what happens around the answer
    def _note(self, line: str) -> None:
        self._clear_live_line()
        self.stderr.write(line + "\n")
        self.stderr.flush()

    def _clear_live_line(self) -> None:
        if self._live_line:
            self.stderr.write("\r\x1b[2K")
            self._live_line = False

    def _show_live_line(self, lines: list[str]) -> None:
        """A running command's latest output, on one line rewritten in place (terminal only)."""
        if not lines or not self.stderr.isatty():
            return
        import shutil

        width = shutil.get_terminal_size((80, 24)).columns
        text = " ".join(lines[-1].split())[: max(width - 6, 10)]
        self.stderr.write("\r\x1b[2K" + self.style.dim(f"  │ {text}"))
        self.stderr.flush()
        self._live_line = True

    def handle(self, event: ev.Event) -> None:
        if SCREEN.defer(lambda: self.handle(event), progress_key(event)):
            return  # a prompt owns the terminal: drawn once it is answered
        event = visible_event(event)  # control characters shown, never obeyed
        if isinstance(event, ev.TextMessageContent):
            self._text(event.delta)
        elif isinstance(event, ev.TextMessageEnd):
            self._end_text()
        elif isinstance(event, ev.ToolCallStart):
            self._end_text()
            self._calls[event.tool_call_id] = (event.tool_call_name, [])
        elif isinstance(event, ev.ToolCallArgs):
            self._calls[event.tool_call_id][1].append(event.delta)
        elif isinstance(event, ev.ToolCallEnd):
            name, parts = self._calls.get(event.tool_call_id, ("?", []))
            self._note(
                self.style.dim("→ ") + f"{name} " + self.style.dim(format_arguments("".join(parts)))
            )
        elif isinstance(event, ev.ToolCallResult):
            self._result(event)
        elif isinstance(event, ev.ReasoningMessageContent):
            self._clear_live_line()  # the model's thinking: dimmed, on stderr
            self.stderr.write(self.style.dim(event.delta))
            self.stderr.flush()
        elif isinstance(event, ev.ReasoningMessageEnd):
            self.stderr.write("\n")
        elif isinstance(event, ev.Custom):
            self._custom(event)

    def _result(self, event: ev.ToolCallResult) -> None:
        meta = event.metadata or {}
        name = self._calls.pop(event.tool_call_id, ("?", []))[0]
        took = f" ({meta['latencyMs']} ms)" if "latencyMs" in meta else ""
        if "error" in meta:
            first = str(meta["error"]).splitlines()[0] if meta["error"] else "failed"
            self._note(self.style.red(f"  ✗ {name}: {first}") + self.style.dim(took))
        else:
            summary = meta.get("summary") or "done"
            self._note(self.style.green("  ✓ ") + f"{name}: {summary}" + self.style.dim(took))

    def _custom(self, event: ev.Custom) -> None:
        value = event.value if isinstance(event.value, dict) else {}
        if event.name == "progress":
            self._show_live_line(value.get("lines") or [])
        elif event.name == "tool_state" and value.get("state") == "waiting for approval":
            name = self._calls.get(value.get("toolCallId", ""), ("?", []))[0]
            self._note(self.style.yellow(f"  … {name}: waiting for approval"))
        elif event.name == "retry":
            self._note(
                self.style.yellow(
                    f"retrying in {value.get('delaySeconds', 0):.1f}s "
                    f"(attempt {value.get('attempt')}): {value.get('reason', '')}"
                )
            )

    def finish(self, summary: RunSummary) -> None:
        self._end_text()
