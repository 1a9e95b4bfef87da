"""`--output json`: one JSON object at the end with the final text, every tool call (its
arguments, result, error and approval), token usage, steps and the exit code."""

from __future__ import annotations

import json
from typing import Any, TextIO

from agentcli import events as ev
from agentcli.output.base import RunSummary


class JsonOutput:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._calls: dict[str, dict[str, Any]] = {}
        self._args: dict[str, list[str]] = {}

    def handle(self, event: ev.Event) -> None:
        if isinstance(event, ev.ToolCallStart):
            self._calls[event.tool_call_id] = {
                "id": event.tool_call_id,
                "name": event.tool_call_name,
                "arguments": None,
                "result": None,
                "error": None,
                "approval": None,
            }
            self._args[event.tool_call_id] = []
        elif isinstance(event, ev.ToolCallArgs):
            self._args[event.tool_call_id].append(event.delta)
        elif isinstance(event, ev.ToolCallEnd):
            raw = "".join(self._args.pop(event.tool_call_id, []))
            self._calls[event.tool_call_id]["arguments"] = _parsed_or_raw(raw)
        elif isinstance(event, ev.ToolCallResult):
            call = self._calls.get(event.tool_call_id)
            if call is not None:
                meta = event.metadata or {}
                call["result"] = event.content
                call["error"] = meta.get("error")
                call["latencyMs"] = meta.get("latencyMs")
        elif isinstance(event, ev.Custom) and event.name == "approval":
            call = self._calls.get(event.value.get("toolCallId"))
            if call is not None:
                call["approval"] = {k: v for k, v in event.value.items() if k != "toolCallId"}

    def finish(self, summary: RunSummary) -> None:
        document = {
            "text": summary.final_text,
            "status": summary.status,
            "exitCode": summary.exit_code,
            "error": summary.error,
            "model": summary.model,
            "steps": summary.steps,
            "usage": summary.usage_wire(),
            "toolCalls": list(self._calls.values()),
            "threadId": summary.thread_id,
            "runId": summary.run_id,
        }
        self.stream.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")
        self.stream.flush()


def _parsed_or_raw(raw: str) -> Any:
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return raw  # what the model sent, verbatim, when it was not valid JSON
