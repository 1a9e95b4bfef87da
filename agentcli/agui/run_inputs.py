"""A RunAgentInput validated by the SDK's own model, without validating a thread's whole
history again each run: AG-UI clients send every message of the thread with each run,
and validating thousands of them made a run's cost grow with the thread. The messages a
thread's last request sent are kept (as parsed JSON, with what they validated to); a new
request whose messages begin with the same ones (equal as JSON, compared in C) has only
the rest validated. Equal JSON validates to an equal message, so what is checked at the
edge is the same; a request that fails is validated whole again, so its error names the
field as before."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

KEPT_BYTES = 16 * 1024 * 1024  # requests' bodies kept, together (4 of the largest allowed)


class RunInputs:
    """Validates RunAgentInputs (raises pydantic's ValidationError), reusing the lead of
    the messages each recent thread sent last."""

    def __init__(self, kept_bytes: int = KEPT_BYTES) -> None:
        self.kept_bytes = kept_bytes
        # thread id -> (its last request's messages as parsed, as validated, body bytes)
        self._threads: OrderedDict[str, tuple[list[Any], list[Any], int]] = OrderedDict()
        self.validated = 0  # messages validated so far (tests count them)

    def validate(self, data: Any, size: int) -> Any:
        """`data`: the parsed body, of `size` bytes."""
        from ag_ui.core import RunAgentInput

        messages = data.get("messages") if isinstance(data, dict) else None
        if not isinstance(messages, list):
            return RunAgentInput.model_validate(data)
        thread = data.get("threadId", data.get("thread_id"))
        kept = self._threads.get(thread) if isinstance(thread, str) else None
        known = kept[0] if kept is not None else []
        lead = len(known) if known and messages[: len(known)] == known else 0
        run_input = None
        if lead:
            try:
                rest = RunAgentInput.model_validate({**data, "messages": messages[lead:]})
                whole = [*kept[1], *rest.messages]  # type: ignore[index]  # kept: lead > 0
                run_input = rest.model_copy(update={"messages": whole})
            except ValueError:  # pydantic's ValidationError: said for the whole request
                run_input = None
        if run_input is None:
            run_input = RunAgentInput.model_validate(data)
            lead = 0
        self.validated += len(messages) - lead
        self._keep(run_input.thread_id, messages, list(run_input.messages), size)
        return run_input

    def _keep(self, thread: str, raw: list[Any], valid: list[Any], size: int) -> None:
        threads = self._threads
        threads.pop(thread, None)
        if size > self.kept_bytes:
            return
        threads[thread] = (raw, valid, size)
        total = sum(entry[2] for entry in threads.values())
        while total > self.kept_bytes:
            _, (_, _, dropped) = threads.popitem(last=False)
            total -= dropped
