"""The user's hooks on a session's own events, the part the composition root hands the
agent: SessionStart (before its first turn; `additionalContext` joins the system prompt),
UserPromptSubmit (before a prompt goes to the model: it may block the prompt, or add
context below it), Stop (the model finished: exit 2 or `decision: "block"` sends the
reason back and the model goes on, at most MAX_STOP_BLOCKS times in a turn), PreCompact,
SessionEnd, and Notification — said when a call waits for an approval, watched for in the
session's events (an output of the FanOut) and run beside the question, never holding it
up."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from agentcli.agent.hook_runner import HookRunner, label
from agentcli.records import dataclass

if TYPE_CHECKING:
    from agentcli.conversation import events as ev
    from agentcli.output.base import RunSummary

MAX_STOP_BLOCKS = 5  # Stop hooks that send the model on, in one turn


@dataclass(frozen=True, slots=True)
class PromptVerdict:
    blocked: str | None = None  # why the prompt does not go to the model
    context: str = ""  # for the model, below the prompt


class SessionHooks:
    def __init__(self, runner: HookRunner) -> None:
        self.runner = runner
        self.started = False
        self._notifies = bool(runner.of("Notification"))  # asked of every event: once
        self._notifying: set[asyncio.Task] = set()

    async def _each(self, event: str, kind: str | None = None, **fields: object) -> list:
        answers = []
        for hook in self.runner.of(event):
            if kind is not None and not hook.applies_to_kind(kind):
                continue
            payload = self.runner.payload(event, **fields)
            answers.append((hook, await self.runner.run(hook, payload)))
        return answers

    async def session_start(self, source: str) -> str:
        """Context for the system prompt; "" when none."""
        self.started = True
        answers = await self._each("SessionStart", source, source=source)
        return "\n\n".join(answer.context for _, answer in answers if answer.context)

    async def user_prompt(self, prompt: str) -> PromptVerdict:
        contexts = []
        for hook, answer in await self._each("UserPromptSubmit", prompt=prompt):
            if answer.decision in ("block", "deny"):
                return PromptVerdict(f"{label(hook)} blocked the prompt: {answer.reason}")
            if answer.context:
                contexts.append(answer.context)
        return PromptVerdict(context="\n\n".join(contexts))

    async def stop(self, active: bool, last_message: str) -> str | None:
        """Why the model should go on, or None to let the turn end."""
        for hook, answer in await self._each(
            "Stop", stop_hook_active=active, last_assistant_message=last_message
        ):
            if answer.decision in ("block", "deny"):
                return f"[{label(hook)}: {answer.reason}]"
        return None

    async def pre_compact(self, trigger: str) -> None:
        await self._each("PreCompact", trigger, trigger=trigger, custom_instructions="")

    async def session_end(self, reason: str = "other") -> None:
        for task in list(self._notifying):
            await asyncio.gather(task, return_exceptions=True)
        if self.started:
            await self._each("SessionEnd", reason=reason)

    # The session's events: a call waiting for an approval is Notification's news.
    def handle(self, event: ev.Event) -> None:
        from agentcli.conversation import events as ev

        if not self._notifies:
            return
        if isinstance(event, ev.ToolState) and event.state == "waiting for approval":
            message = "agentcli needs your approval for a tool call"
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # said outside a turn's loop: nothing waits on it
                return
            task = loop.create_task(
                self._each(
                    "Notification",
                    "permission_prompt",
                    message=message,
                    notification_type="permission_prompt",
                    tool_use_id=event.tool_call_id,
                )
            )
            self._notifying.add(task)
            task.add_done_callback(self._notifying.discard)

    def finish(self, summary: RunSummary) -> None:
        pass
