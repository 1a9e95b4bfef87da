"""Runs the user's hooks of one session (agentcli.habits.hooks finds them): each gets one
JSON object on stdin in Claude Code's shape — `session_id`, `transcript_path`, `cwd`,
`hook_event_name`, and the event's own fields (`tool_name`, `tool_input`, `tool_use_id`,
`tool_response`, `prompt`, `source`, ...) — runs in the workspace with the environment
commands get (an allow-list: never an API key), in its own process group, until its
timeout stops the group. What each decided is a `hook` event, for the session file and
`--output jsonl`; a hook that failed is also one warning line (a PreToolUse hook's
failure refuses its call instead, which says so)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.habits.hook_answer import Answer, read_answer

if TYPE_CHECKING:
    from agentcli.conversation import events as ev
    from agentcli.habits.hooks import Hook

MAX_SHOWN_COMMAND = 80  # characters of a hook's command in its event and lines


class HookRunner:
    def __init__(
        self,
        hooks: list[Hook],
        *,
        cwd: Path,
        env: Mapping[str, str],
        session_id: Callable[[], str],
        transcript: Callable[[], str | None],
        emit: Callable[[ev.Event], None],
    ) -> None:
        self.hooks = hooks
        self.cwd = cwd
        # Claude Code's scripts find the project by this variable; agentcli's name too.
        root = str(cwd)
        self.env = {**env, "CLAUDE_PROJECT_DIR": root, "AGENTCLI_PROJECT_DIR": root}
        self.session_id = session_id
        self.transcript = transcript
        self.emit = emit

    def of(self, event: str) -> list[Hook]:
        return [hook for hook in self.hooks if hook.event == event]

    def payload(self, event: str, **fields: Any) -> dict[str, Any]:
        return {
            "session_id": self.session_id(),
            "transcript_path": self.transcript(),
            "cwd": str(self.cwd),
            "hook_event_name": event,
            **fields,
        }

    async def run(self, hook: Hook, payload: dict[str, Any], call_id: str | None = None) -> Answer:
        """One hook, to its answer; what it decided is said as an event."""
        from agentcli.process.hook_process import run_hook_process

        if hook.unloaded is not None:  # nothing to run: its group could not be read
            answer = Answer(failure=f"could not be read ({hook.unloaded})")
            self._said(hook, answer, None, call_id)
            return answer
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8", "replace")
        done = await run_hook_process(
            hook.command, data, cwd=self.cwd, env=self.env, timeout=hook.timeout
        )
        if done.not_started is not None:
            answer = Answer(failure=f"could not start: {done.not_started}")
        else:
            answer = read_answer(
                hook.event,
                done.exit_code,
                done.stdout,
                done.stderr,
                timed_out=done.timed_out,
                timeout=hook.timeout,
            )
        self._said(hook, answer, done.exit_code, call_id)
        return answer

    def _said(self, hook: Hook, answer: Answer, code: int | None, call_id: str | None) -> None:
        from agentcli.conversation import events as ev

        outcome = "failed" if answer.failure is not None else (answer.decision or "ok")
        self.emit(
            ev.HookRan(
                hook_event=hook.event,
                command=shown_command(hook.command),
                origin=hook.origin,
                outcome=outcome,
                reason=answer.failure or answer.reason or None,
                exit_code=code,
                tool_call_id=call_id,
                changed_input=True if answer.updated_input is not None else None,
                added_context=True if answer.context else None,
            )
        )
        if answer.failure is not None and hook.event != "PreToolUse":
            self.emit(ev.RunWarning(message=f"{label(hook)} {answer.failure}; going on"))
        if answer.message:
            self.emit(ev.RunWarning(message=f"{label(hook)}: {answer.message}"))


def label(hook: Hook) -> str:
    """How a line names a hook: `the PreToolUse hook `guard.sh``."""
    return f"the {hook.event} hook `{shown_command(hook.command)}`"


def shown_command(command: str) -> str:
    """A hook's command on one line; a long one with its program's folder elided (the
    program's name is what tells hooks apart), then cut."""
    line = " ".join(command.split())
    if len(line) <= MAX_SHOWN_COMMAND:
        return line
    program, _, rest = line.partition(" ")
    if program.count("/") > 1:
        program = "…/" + "/".join(program.rsplit("/", 2)[-2:])
    line = f"{program} {rest}".strip()
    return line if len(line) <= MAX_SHOWN_COMMAND else line[: MAX_SHOWN_COMMAND - 1] + "…"
