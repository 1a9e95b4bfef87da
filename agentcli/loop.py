"""The multi-step agent loop: send → stream → collect tool calls → execute → append
results → send again, until the model answers without tool calls or the step limit."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from agentcli import events as ev
from agentcli.executor import Executor
from agentcli.messages import Message, TurnCollector
from agentcli.providers.base import ModelRequest, Provider

Emit = Callable[[ev.Event], None]
LoopStatus = Literal["finished", "max_steps"]


@dataclass(slots=True)
class LoopState:
    """What the loop has done so far; read by the runner even when the loop is cut short."""

    steps: int = 0
    usage: ev.Usage = field(default_factory=ev.Usage)
    final_text: str = ""
    collector: TurnCollector | None = None  # the step in progress


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
    ) -> None:
        self.provider = provider
        self.executor = executor
        self.emit = emit
        self.system = system
        self.tools = tools
        self.max_steps = max_steps
        self.state = LoopState()

    async def run(self, conversation: list[Message]) -> LoopStatus:
        """Runs until done; appends every assistant and tool message to `conversation`."""
        while self.state.steps < self.max_steps:
            self.state.steps += 1
            step_name = f"step-{self.state.steps}"
            self.emit(ev.StepStarted(step_name=step_name))
            message, end = await self._model_step(conversation)
            conversation.append(message)
            self.state.final_text = message.content
            if end.finish_reason == "length":
                self.emit(
                    ev.Custom(
                        name="warning",
                        value={
                            "message": "the model stopped at its output token limit; "
                            "the answer may be incomplete"
                        },
                    )
                )
            if message.tool_calls:
                conversation.extend(await self.executor.run(message.tool_calls))
            self.emit(ev.StepFinished(step_name=step_name))
            if not message.tool_calls:
                return "finished"
        return "max_steps"

    async def _model_step(self, conversation: list[Message]) -> tuple[Message, ev.StepEnd]:
        collector = TurnCollector()
        self.state.collector = collector
        request = ModelRequest(system=self.system, messages=conversation, tools=self.tools)
        end = ev.StepEnd(finish_reason="stop")
        # aclosing: if anything stops this step early, the provider's stream (and its HTTP
        # response) is closed here, not later by the garbage collector.
        async with contextlib.aclosing(self.provider.stream(request)) as stream:
            async for item in stream:
                if isinstance(item, ev.StepEnd):
                    end = item
                    continue
                collector.feed(item)
                self.emit(item)
        if end.usage is not None:
            self.state.usage.add(end.usage)
        self.state.collector = None
        return collector.message(), end
