"""A RunAgentInput parsed and validated by the SDK's own model, without parsing or
validating a thread's whole history again each run: AG-UI clients send every message of
the thread with each run, and parsing and validating thousands of them made a run's cost
grow with the thread. The messages a thread's last request sent are kept (their bytes, as
parsed, and what they validated to). A new body whose messages array begins with the same
bytes has only the rest parsed (agentcli.agui.body_lead); failing that, a request whose
messages begin with the same ones as JSON (compared in C) has only the rest validated.
Equal JSON validates to an equal message, so what is checked at the edge is the same; a
request that fails is validated whole again, so its error names the field as before."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from agentcli.agui.body_lead import Lead, Read, read
from agentcli.records import dataclass

KEPT_BYTES = 16 * 1024 * 1024  # requests' bodies kept, together (4 of the largest allowed)
# Threads kept at most: a small body's parsed and validated messages weigh far more than
# its bytes, so the byte bound alone would let many small threads hold much memory.
KEPT_THREADS = 256


@dataclass(frozen=True, slots=True)
class _Kept:
    """A thread's last request: its messages as parsed and as validated, its body's size,
    and its messages' bytes (None when it was parsed whole by json.loads)."""

    raw: list[Any]
    valid: list[Any]
    size: int
    lead: Lead | None


class RunInputs:
    """Parses request bodies and validates RunAgentInputs (pydantic's ValidationError),
    reusing the lead of the messages each recent thread sent last."""

    def __init__(self, kept_bytes: int = KEPT_BYTES, kept_threads: int = KEPT_THREADS) -> None:
        self.kept_bytes = kept_bytes
        self.kept_threads = kept_threads
        self._threads: OrderedDict[str, _Kept] = OrderedDict()  # thread id -> last request
        self._kept_size = 0  # the kept bodies' sizes, together: no sum over them each run
        self.parsed = 0  # messages parsed so far (tests count them)
        self.validated = 0  # messages validated so far

    def read(self, body: bytes) -> Read | None:
        """`body` parsed as `loads(contents(body))` parses it, its known lead not parsed
        again; None when it is unusual (or not JSON): the caller parses it whole, as it
        always did, for its value or its error (from its own frame: a body nested near
        the recursion limit is refused or not as before)."""
        done = read(body, self._lead_of)
        if done is not None:
            self.parsed += done.parsed
        return done

    def _lead_of(self, thread: str) -> Lead | None:
        kept = self._threads.get(thread)
        return kept.lead if kept is not None else None

    def validate(self, data: Any, size: int, done: Read | None = None) -> Any:
        """`data`: the parsed body, of `size` bytes; `done`: how `read` parsed it (None:
        parsed whole)."""
        from ag_ui.core import RunAgentInput

        messages = data.get("messages") if isinstance(data, dict) else None
        if not isinstance(messages, list):
            return RunAgentInput.model_validate(data)
        if done is None:
            self.parsed += len(messages)
        thread = data.get("threadId", data.get("thread_id"))
        kept = self._threads.get(thread) if isinstance(thread, str) else None
        ours = done is not None and done.data is data  # else a caller's own data
        if ours and done.known and kept is not None and kept.lead is done.used:  # type: ignore[union-attr]
            lead = done.known  # the same bytes as the kept lead: its very values
        else:
            known = kept.raw if kept is not None else []
            lead = len(known) if known and messages[: len(known)] == known else 0
        run_input = None
        if lead:
            try:
                rest = RunAgentInput.model_validate({**data, "messages": messages[lead:]})
                whole = [*kept.valid[:lead], *rest.messages]  # type: ignore[union-attr]
                run_input = rest.model_copy(update={"messages": whole})
            except ValueError:  # pydantic's ValidationError: said for the whole request
                run_input = None
        if run_input is None:
            run_input = RunAgentInput.model_validate(data)
            lead = 0
        self.validated += len(messages) - lead
        mine = done.lead if ours else None  # type: ignore[union-attr]
        self._keep(run_input.thread_id, _Kept(messages, run_input.messages, size, mine))
        return run_input

    def _keep(self, thread: str, kept: _Kept) -> None:
        threads = self._threads
        earlier = threads.pop(thread, None)
        if earlier is not None:
            self._kept_size -= earlier.size
        if kept.size > self.kept_bytes:
            return
        threads[thread] = kept
        self._kept_size += kept.size
        while self._kept_size > self.kept_bytes or len(threads) > self.kept_threads:
            _, dropped = threads.popitem(last=False)
            self._kept_size -= dropped.size
