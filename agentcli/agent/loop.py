"""The multi-step agent loop: send → stream → collect tool calls → execute → append
results → send again, until the model answers without tool calls or the step limit."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from agentcli.agent.budget import StepBudget
from agentcli.agent.compaction import Compactor, summary_section
from agentcli.agent.executor import Executor
from agentcli.agent.request_images import hinted, images_for_request
from agentcli.agent.stream_limits import Overflow, StreamLimits, StreamMeter
from agentcli.agent.waiting import WaitingNotice
from agentcli.conversation import events as ev
from agentcli.conversation.images import DEFAULT_MAX_PER_REQUEST
from agentcli.conversation.messages import Conversation, Message, TurnCollector
from agentcli.errors import AgentCliError, ProviderError
from agentcli.providers.base import ModelRequest, Provider, events_in
from agentcli.records import dataclass, field

Emit = Callable[[ev.Event], None]


class InvalidCallsError(AgentCliError):
    """A model that keeps sending calls that cannot run (weak or confused models)."""

    code = "invalid_calls"


class StreamLimitError(AgentCliError):
    """The model's answer passed limits.text_message: the run ends there."""

    code = "stream_limit"


CUT_MARK = "\n\n[agentcli stopped reading here: the answer passed limits.text_message]"


LoopStatus = Literal["finished", "max_steps", "pending"]


@dataclass(frozen=True, slots=True)
class Reported:
    """The context as the provider last counted it: the request's tokens and the answer's,
    when the conversation had `count` messages from `start` (a compaction voids it)."""

    tokens: int
    count: int
    start: int


@dataclass(slots=True)
class LoopState:
    """What the loop has done so far; read by the runner even when the loop is cut short."""

    steps: int = 0
    usage: ev.Usage = field(default_factory=ev.Usage)
    final_text: str = ""
    collector: TurnCollector | None = None  # the step in progress


# The finish reasons that say the answer may not be whole, and what the user is told.
_FINISH_WARNINGS = {
    "length": "the model stopped at its output token limit; the answer may be incomplete",
    "context_window": (
        "the model stopped: the conversation fills its context window; the answer may be incomplete"
    ),
    "content_filter": "the provider's content filter stopped the answer; it may be incomplete",
    "refusal": "the model refused to answer",
}


class AgentLoop:
    def __init__(
        self,
        provider: Provider,
        executor: Executor,
        emit: Emit,
        *,
        system: str,
        tools: list[dict[str, Any]],
        max_steps: int,
        compactor: Compactor | None = None,
        refresh_tools: Callable[[], Awaitable[list[dict[str, Any]]]] | None = None,
        limits: StreamLimits | None = None,
        images_per_request: int = DEFAULT_MAX_PER_REQUEST,
        budget: StepBudget | None = None,
    ) -> None:
        """`budget`: the steps shared with the agent that started this one (a subagent's);
        without one, `max_steps` for each run."""
        self.provider = provider
        self.executor = executor
        self.emit = emit
        self.system = system
        self.tools = tools
        self.max_steps = max_steps
        # Its own (started again each run), or a subagent's within its parent's.
        self.budget = budget or StepBudget(max_steps)
        self._owns_budget = budget is None
        self.compactor = compactor
        self.refresh_tools = refresh_tools  # the registry, read again before every step
        self.limits = limits or StreamLimits()
        self.images_per_request = images_per_request
        self._overflow: Overflow | None = None  # the cap the last step passed, if any
        self.state = LoopState()
        self.reported: Reported | None = None  # for the REPL's context meter
        # Tools a client runs (AG-UI frontend tools): offered, never executed here; a call
        # of one ends the run "pending" until its result comes back.
        self.frontend: set[str] = set()
        self.frontend_specs: list[dict[str, Any]] = []  # theirs, kept beside the registry's

    async def run(self, conversation: Conversation) -> LoopStatus:
        """Runs until done; adds every assistant and tool message to `conversation`."""
        self.state = LoopState()
        conversation.repair()  # a call left without a result would make providers refuse
        if self._owns_budget:
            self.budget.start()
        while self.budget.take():
            self.state.steps += 1
            step_name = f"step-{self.state.steps}"
            self.emit(ev.StepStarted(step_name=step_name))
            if self.refresh_tools is not None:
                self.tools = [*await self.refresh_tools(), *self.frontend_specs]
            await self._compact_if_needed(conversation)
            message, end = await self._model_step(conversation)
            overflow = self._overflow
            if end.extra:
                message.extra.update(end.extra)
            if overflow is not None and overflow.kind != "arguments":
                message.content += CUT_MARK  # the model sees where it was cut
                conversation.add(message)
                raise StreamLimitError(overflow.describe())
            if overflow is not None and not _runs_here(message, overflow):
                # A call the provider (or a remote agent) runs itself: no result here tells
                # the model, and the rest of its answer was never read, so the run ends.
                conversation.add(message)
                raise StreamLimitError(overflow.describe())
            conversation.add(message)
            if end.usage is not None and end.usage.total_tokens:
                tokens = end.usage.input_tokens + end.usage.output_tokens
                self.reported = Reported(tokens, len(conversation.messages), conversation.start)
            self.state.final_text = message.content
            warning = _FINISH_WARNINGS.get(end.finish_reason)
            if warning is not None:
                self._warn(warning)
            pending = False
            if message.tool_calls:
                # Each result is recorded as it comes (an interruption keeps the finished
                # ones); then they are put in the order of the calls.
                local = [c for c in message.tool_calls if c.name not in self.frontend]
                start = len(conversation.messages)
                cut = {}
                if overflow is not None and overflow.tool_call_id:
                    self._warn(overflow.describe())
                    cut[overflow.tool_call_id] = overflow.limit
                results = await self.executor.run(local, on_result=conversation.add, cut=cut)
                conversation.messages[start:] = results
                if self.executor.give_up:
                    raise InvalidCallsError(self.executor.give_up)
                pending = len(local) < len(message.tool_calls) or bool(
                    self.executor.decision.deferred
                )
            self.emit(ev.StepFinished(step_name=step_name))
            if pending:
                return "pending"  # a client runs or approves a call; its answer continues
            if not message.tool_calls and end.finish_reason != "pause":
                return "finished"  # "pause": the provider's own tools paused; ask it to go on
        return "max_steps"

    def _warn(self, text: str) -> None:
        self.emit(ev.RunWarning(message=text))

    def current_system(self, conversation: Conversation) -> str:
        if conversation.summary:
            return self.system + summary_section(conversation.summary)
        return self.system

    async def _compact_if_needed(self, conversation: Conversation) -> None:
        if self.compactor is None:
            return
        used = self.compactor.used(self.current_system(conversation), conversation, self.tools)
        if not self.compactor.over(used):
            return
        try:
            await self.compactor.compact(conversation, used=used)
        except ProviderError as error:
            self._warn(f"could not compact the conversation: {error}")

    async def _model_step(self, conversation: Conversation) -> tuple[Message, ev.StepEnd]:
        collector = TurnCollector()
        self.state.collector = collector
        messages = conversation.visible()
        if messages and messages[0].role != "user":  # after a compaction: start with the user
            messages = [Message.user("(The conversation continues from the summary.)"), *messages]
        system = self.current_system(conversation)
        if self.compactor is not None:
            messages = self.compactor.fit(system, messages, self.tools, conversation.tokens)
        if conversation.indexed().with_images:  # else no message has any to leave out
            messages = images_for_request(
                messages,
                takes_images=bool(getattr(self.provider, "takes_images", False)),
                limit=self.images_per_request,
            )
        request = ModelRequest(
            system=system, messages=messages, tools=self.tools, encodings=conversation.encodings
        )
        end = ev.StepEnd(finish_reason="stop")
        meter, self._overflow = StreamMeter(self.limits), None
        # aclosing: if anything stops this step early, the provider's stream (and its HTTP
        # response) is closed here, not later by the garbage collector.
        answer = hinted(self.provider.stream(request), messages, self.provider.name)
        async with contextlib.aclosing(answer) as stream:
            doing = getattr(self.provider, "doing", None)  # what an in-process model does
            with WaitingNotice(self.emit, doing=doing) as waiting:
                async for item in stream:
                    waiting.touch()
                    if isinstance(item, ev.StepEnd):
                        end = item
                        continue
                    for event in events_in(item):
                        admitted, self._overflow = meter.admit(event)
                        if admitted is not None:
                            collector.feed(admitted)
                            self.emit(admitted)
                        if self._overflow is not None:
                            break
                    if self._overflow is not None:
                        break  # closing the stream closes the response: nothing more is read
        if self._overflow is not None:
            for closing in meter.ends():  # what the cut left open, closed for every output
                collector.feed(closing)
                self.emit(closing)
        if end.usage is not None:
            self.state.usage.add(end.usage)
        self.state.collector = None
        return collector.message(), end


def _runs_here(message: Message, overflow: Overflow) -> bool:
    """Whether the call whose arguments passed the limit is one agentcli runs (its
    result then tells the model why it did not run)."""
    return any(call.id == overflow.tool_call_id for call in message.tool_calls)
