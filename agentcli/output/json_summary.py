"""`--output json`: one JSON object at the end with the final text, every tool call (its
arguments, result, error and approval), token usage, steps and the exit code."""

from __future__ import annotations

from typing import Any, TextIO

from agentcli.conversation import events as ev
from agentcli.conversation.fold import StreamFold, ToolCallState
from agentcli.output.base import RunSummary
from agentcli.output.visible import visible_json


class JsonOutput:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.fold = StreamFold()

    def handle(self, event: ev.Event) -> None:
        self.fold.apply(event)

    def finish(self, summary: RunSummary) -> None:
        document = {
            "text": summary.final_text,
            "status": summary.status,
            "exitCode": summary.exit_code,
            "error": summary.error,
            "model": summary.model,
            "steps": summary.steps,
            "usage": summary.usage_wire(),
            "toolCalls": [_call_summary(call) for call in self.fold.calls.values()],
            "threadId": summary.thread_id,
            "runId": summary.run_id,
        }
        self.stream.write(visible_json(document, indent=2) + "\n")  # no raw C1 or bidi
        self.stream.flush()


def _call_summary(call: ToolCallState) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "id": call.id,
        "name": call.name,
        "arguments": call.arguments() if call.ended else None,
        "result": call.result,
        "error": call.error,
        "approval": call.approval,
    }
    if call.result is not None:
        summary["latencyMs"] = call.latency_ms
    if call.error_kind is not None:
        summary["errorKind"] = call.error_kind
    return summary
