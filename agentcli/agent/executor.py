"""Runs the tool calls of one model step: parse → refine → validate, then each call through
the chain of steps around it (agentcli.agent.call_steps: the user's hooks, the policy's
decision, checkpoints, ...) to the tool itself.

Calls of one step run concurrently (bounded); results come back in the order the model
asked for them. Every failure — bad JSON, unknown tool, schema violation, denial, an
exception inside a tool — becomes an error result the model sees, never a crash.

asyncio and the events are imported when a call runs, not with the module: `policy
explain` builds an Executor only to prepare calls (parse, refine, validate)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.agent.call_steps import (
    CallStep,
    InvalidArguments,
    ToolCallFlight,
    ordered,
    through,
)
from agentcli.agent.policy_step import Deferred, PolicyStep
from agentcli.agent.quick_schema import conforms
from agentcli.agent.refine import refine_arguments
from agentcli.conversation.error_kinds import DENIED, FAILED, INVALID
from agentcli.conversation.images import admit_all
from agentcli.conversation.messages import Message, ToolCall, new_id
from agentcli.json_depth import too_deep
from agentcli.policy.engine import Policy, TurnCancelled
from agentcli.records import dataclass, replace
from agentcli.risk import ApprovalRequest, Decision
from agentcli.text.decoding import TooDeep, TooLong, loads, shown
from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from agentcli.tools.content import ImagePart, part_metadata
from agentcli.tools.registry import ToolRegistry

if TYPE_CHECKING:
    import asyncio

    from agentcli.conversation import events as ev

Emit = Callable[["ev.Event"], None]


class InvalidCall(Exception):
    """The model's call cannot run as sent; the message tells the model how to fix it
    (with the schema), `problem` tells the person watching in a few words."""

    def __init__(self, message: str, problem: str) -> None:
        super().__init__(message)
        self.problem = problem

    @property
    def short(self) -> str:
        """The terminal's line; the model gets the whole message."""
        return f"the model's call was invalid ({self.problem}); it was told and may retry"


@dataclass(slots=True)
class Prepared:
    tool: Tool
    args: dict[str, Any]


def _problem_in_words(error: Any) -> str:
    """A jsonschema error in a few words for the terminal (`missing 'path'`)."""
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "required":
        missing = [name for name in error.validator_value if name not in (error.instance or {})]
        return "missing " + ", ".join(repr(name) for name in missing[:3])
    if error.validator == "type" and where:
        return f"{where!r} is not {_a(error.validator_value)}"
    if error.validator == "additionalProperties":
        return "unexpected arguments"
    shown = error.message if len(error.message) <= 60 else error.message[:59] + "…"
    return f"{where}: {shown}" if where else shown


def _a(json_type: Any) -> str:
    if isinstance(json_type, list):
        return " or ".join(_a(t) for t in json_type)
    return {"array": "a list", "object": "an object", "integer": "an integer"}.get(
        str(json_type), f"a {json_type}"
    )


def _schema_hint(tool: Tool) -> str:
    return "Expected parameters (JSON Schema): " + json.dumps(tool.parameters, sort_keys=True)


class Executor:
    def __init__(
        self,
        registry: ToolRegistry,
        policy: Policy,
        context: ToolContext,
        emit: Emit,
        *,
        max_concurrency: int = 8,
        max_invalid_calls: int = 3,
        steps: Sequence[CallStep] = (),
    ) -> None:
        """`steps`: what the composition root puts around every call (hooks, narrowed
        tools, checkpoints), placed by their stage around the policy's decision."""
        self.registry = registry
        self.policy = policy
        self.context = context
        self.emit = emit
        self.decision = PolicyStep(policy, emit)  # the chain's decision: denials, deferrals
        self.steps = ordered([*steps, self.decision])
        self.max_invalid_calls = max_invalid_calls
        self._invalid_streak: dict[str, int] = {}  # tool name -> invalid calls in a row
        self.give_up: str | None = None  # set when a weak model keeps sending bad calls
        self.max_concurrency = max_concurrency
        self._slots: asyncio.Semaphore | None = None  # made by the first call that runs
        self._validators: dict[str, Any] = {}

    def start_run(self) -> None:
        """A new run: its denials, deferrals and give-up are its own."""
        self.decision.start_run()
        self.give_up = None

    def add_step(self, step: CallStep) -> None:
        """One more step around every call from now on (a served run's, a subagent's)."""
        self.steps = ordered([*self.steps, step])

    async def run(
        self,
        calls: list[ToolCall],
        decided: dict[str, Decision] | None = None,
        on_result: Callable[[Message], None] | None = None,
        cut: dict[str, int] | None = None,
    ) -> list[Message]:
        """All calls start together; results come back in the order the model asked. If
        one prompt cancels the turn (Ctrl-C), the other calls are cancelled too. `decided`
        holds decisions made elsewhere (a deferred approval's answer), by call id; a call
        whose approval is deferred has no result. `on_result` gets each result the moment
        its call finishes (to record it then, so an interruption loses no finished result).
        `cut`: calls whose arguments passed limits.tool_arguments (id -> the limit): they
        do not run; the model is told why, as for any invalid call."""
        import asyncio

        try:
            async with asyncio.TaskGroup() as group:
                tasks = [
                    group.create_task(
                        self._run_one(
                            call, (decided or {}).get(call.id), on_result, (cut or {}).get(call.id)
                        )
                    )
                    for call in calls
                ]
        except* TurnCancelled as cancelled:
            raise cancelled.exceptions[0] from None
        return [result for task in tasks if (result := task.result()) is not None]

    async def _run_one(
        self,
        call: ToolCall,
        decided: Decision | None = None,
        on_result: Callable[[Message], None] | None = None,
        cut: int | None = None,
    ) -> Message | None:
        # The tool's own time: from when it starts running (after its approval, which may
        # have waited on a person, and its turn among concurrent calls) to its result; a
        # call that never runs reports the time it took to refuse.
        started = [time.monotonic()]
        try:
            if cut is not None:
                raise _cut_call(call, cut)
            prepared = self.prepare(call)
        except InvalidCall as invalid:
            output = ToolOutput(str(invalid), error=True, summary=invalid.short, error_kind=INVALID)
            self._count_invalid(call.name, str(invalid))
        else:
            self._invalid_streak[call.name] = 0
            try:
                output = await self._through_steps(call, prepared, decided, started)
            except Deferred:
                self.decision.deferred.append(call.id)
                return None
            if output.error_kind == DENIED:  # by the policy, a hook, allowed-tools, the boundary
                self.decision.denied += 1
        latency_ms = int((time.monotonic() - started[0]) * 1000)
        images = [part for part in output.parts if isinstance(part, ImagePart)]
        if images:  # what a model may see; the text says why the others were not sent
            images, output.content = admit_all(images, output.content, self.context.image_limit)
        # File names in a listing or an error are the OS's: bytes that are not UTF-8 are
        # shown `\\xHH`, which the file tools read back (agentcli.text.decoding).
        output.content = shown(output.content)
        if output.summary:
            output.summary = shown(output.summary)
        metadata: dict[str, Any] = {"latencyMs": latency_ms}
        if output.error:
            metadata["error"] = output.summary or output.content
            metadata["errorKind"] = output.error_kind or FAILED
        if output.summary and not output.error:
            metadata["summary"] = output.summary
        if output.parts:
            metadata["parts"] = [part_metadata(part) for part in output.parts]
        from agentcli.conversation import events as ev

        message_id = new_id("msg")  # the event's and the message's: clients match them
        self.emit(
            ev.ToolCallResult(
                message_id=message_id,
                tool_call_id=call.id,
                content=output.content,
                metadata=metadata,
            )
        )
        if not output.error:
            result = Message.tool_result(call.id, output.content)
        else:
            result = Message.tool_result(
                call.id, output.content, error=metadata["error"], kind=metadata["errorKind"]
            )
        result.id = message_id
        result.images = images
        if on_result is not None:
            on_result(result)
        return result

    def _count_invalid(self, name: str, error: str) -> None:
        """Bad calls go back to the model to retry — but not forever."""
        streak = self._invalid_streak.get(name, 0) + 1
        self._invalid_streak[name] = streak
        if streak >= self.max_invalid_calls and self.give_up is None:
            first = error.split(". Expected parameters")[0]
            self.give_up = (
                f"the model sent {streak} invalid calls to {name!r} in a row; stopping rather "
                f"than looping (last error: {first})"
            )

    def prepare(self, call: ToolCall) -> Prepared:
        tool = self.registry.get(call.name)
        if tool is None:
            available = ", ".join(self.registry.names()) or "none"
            raise InvalidCall(
                f"unknown tool {call.name!r}; available tools: {available}", "no such tool"
            )
        args = _parse_arguments(call.arguments, tool)
        args = refine_arguments(args, tool.parameters)
        self._validate(tool, args)
        return Prepared(tool, args)

    def _validate(self, tool: Tool, args: dict[str, Any]) -> None:
        _check_paths(tool, args)
        if conforms(tool.parameters, args):
            return  # certainly valid; jsonschema (slow to import) only to explain a failure
        validator = self._validators.get(tool.name)
        if validator is None or validator.schema is not tool.parameters:  # a list changed
            from jsonschema import Draft202012Validator
            from referencing import Registry

            # An empty registry: a $ref resolves within the schema or not at all (never
            # fetched or read from disk: jsonschema's default registry would).
            validator = Draft202012Validator(tool.parameters, registry=Registry())
            self._validators[tool.name] = validator
        from referencing.exceptions import Unresolvable

        try:
            errors = sorted(validator.iter_errors(args), key=lambda e: list(e.path))
        except (RecursionError, Unresolvable) as error:  # a $ref loop, a $ref to nowhere
            why = (
                "it refers to itself without end"
                if isinstance(error, RecursionError)
                else ("a $ref in it resolves to nothing")
            )
            raise InvalidCall(
                f"the arguments for {tool.name} cannot be checked: its parameters schema is "
                f"unusable ({why}); the tool did not run",
                "unusable schema",
            ) from None
        if not errors:
            return
        problems = []
        for error in errors[:5]:
            where = ".".join(str(p) for p in error.absolute_path)
            problems.append(f"{where}: {error.message}" if where else error.message)
        message = f"invalid arguments for {tool.name}: {'; '.join(problems)}. {_schema_hint(tool)}"
        raise InvalidCall(message, _problem_in_words(errors[0]))

    def _context_for(
        self, call: ToolCall, profile: str, assessment: Any, decision: Decision | None
    ) -> ToolContext:
        def progress(value: dict[str, Any]) -> None:
            from agentcli.conversation import events as ev

            self.emit(ev.custom_event("progress", {"toolCallId": call.id, **value}))

        # Approved as a call inside the workspace: the tool must not open anything outside
        # it or sensitive. Beyond the boundary, a person's approval grants that one path.
        outside = assessment.outside
        by_person = decision is not None and decision.by == "user"
        grant = Path(outside.place) if outside is not None and by_person else None
        return replace(
            self.context,
            call_id=call.id,
            progress=progress,
            profile=profile,
            confine=not assessment.protected,
            grant=grant,
        )

    def sandbox_profile(self, tool: Tool, args: dict[str, Any], assessment: Any) -> str | None:
        """The sandbox profile a tool that runs commands gets for this call; None for
        tools that run nothing."""
        if not tool.runs_commands:
            return None
        sandbox = self.context.sandbox
        if sandbox is None:
            return "none"
        return sandbox.profile_for(assessment.risk, tool.requested_sandbox(args)).value

    def _request(self, tool: Tool, args: dict[str, Any]) -> tuple[ApprovalRequest, str | None]:
        """What the decision is made on: the call's risk, its rule subjects, what the prompt
        shows, and the sandbox profile it would run in."""
        assessment = tool.assess(args, self.context)
        subjects = tool.rule_subjects(args, self.context)
        preview = tool.preview(args, self.context)
        description = tool.describe(args)
        profile = self.sandbox_profile(tool, args, assessment)
        request = ApprovalRequest(
            tool.policy_tool(args),
            args,
            assessment,
            preview,
            subjects,
            sandbox=profile,
            description=description,
            network=tool.network,
        )
        return request, profile

    async def _through_steps(
        self, call: ToolCall, prepared: Prepared, decided: Decision | None, started: list[float]
    ) -> ToolOutput:
        tool = prepared.tool
        try:
            request, profile = self._request(tool, prepared.args)
        except Exception as exc:  # a broken risk function must not crash the run
            return ToolOutput.failure(f"{tool.name}: could not assess the call: {exc}", FAILED)

        def revise(args: dict[str, Any]) -> None:
            try:
                args = refine_arguments(args, tool.parameters)
                self._validate(tool, args)
            except InvalidCall as invalid:
                raise InvalidArguments(str(invalid)) from None
            flight.arguments = args
            flight.request, flight.profile = self._request(tool, args)

        flight = ToolCallFlight(
            call=call,
            tool=tool,
            arguments=prepared.args,
            request=request,
            context=self.context,
            revise=revise,
            decided=decided,
            profile=profile,
        )

        async def run(flight: ToolCallFlight) -> ToolOutput:
            started[0] = time.monotonic()  # the tool's own time starts after its approval
            return await self._execute(flight, started)

        return await through(self.steps, flight, run)

    async def _execute(self, flight: ToolCallFlight, started: list[float]) -> ToolOutput:
        """The tool itself, once every step before it let the call go on."""
        tool, args, call = flight.tool, flight.arguments, flight.call
        assessment = flight.request.assessment
        if self._slots is None:
            import asyncio

            self._slots = asyncio.Semaphore(self.max_concurrency)
        async with self._slots:
            # Resolve again right before running: if the target changed since the decision
            # (a symlink swapped, say) and is now riskier, refuse rather than run.
            again = tool.assess(args, self.context)
            if again.risk > assessment.risk:
                return ToolOutput.failure(
                    f"denied: the call changed since approval: {again.reason}", DENIED
                )
            self._emit_state(call, "running")
            started[0] = time.monotonic()
            flight.ran = True
            decision = flight.decision
            try:
                context = self._context_for(call, flight.profile or "none", assessment, decision)
                return await self.registry.call(tool, args, context)
            except TurnCancelled:
                raise  # Ctrl-C at a question the tool asked: the turn ends, as at an approval
            except ToolFailure as failure:
                return ToolOutput.failure(str(failure), failure.kind)
            except Exception as exc:  # a tool bug is a result, not a crash
                return ToolOutput.failure(f"{tool.name} failed: {type(exc).__name__}: {exc}")

    def _emit_state(self, call: ToolCall, state: str) -> None:
        from agentcli.conversation import events as ev

        self.emit(ev.ToolState(tool_call_id=call.id, state=state))


def _check_paths(tool: Tool, args: dict[str, Any]) -> None:
    """A path with a NUL byte names no file (the OS would refuse it with an exception
    deep inside whatever resolves it): the call is refused here, in one plain line."""
    for name in tool.path_arguments:
        value = args.get(name)
        if isinstance(value, str) and "\x00" in value:
            raise InvalidCall(f"the {name} contains a NUL byte", f"a NUL byte in the {name}")


def _cut_call(call: ToolCall, limit: int) -> InvalidCall:
    return InvalidCall(
        f"the arguments of {call.name} passed limits.tool_arguments ({limit:,} characters), "
        "so agentcli stopped reading them and the call did not run. Send less in one call "
        "(a large file in parts: write_file with the first part, then edit_file to add the "
        "rest).",
        "arguments over limits.tool_arguments",
    )


MAX_ARGUMENT_DEPTH = 64  # nesting of objects and arrays in one call's arguments


class _NotJson(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise _NotJson(name)  # NaN, Infinity: Python's json accepts them, JSON does not


def _parse_arguments(raw: str, tool: Tool) -> dict[str, Any]:
    if not raw.strip():
        return {}
    depth_hint = f"nested deeper than {MAX_ARGUMENT_DEPTH} levels; the tool did not run"
    try:
        args = loads(raw, parse_constant=_no_constant)  # a lone "\\ud800" becomes U+FFFD
    except json.JSONDecodeError as exc:
        raise InvalidCall(
            f"the arguments for {tool.name} are not valid JSON ({exc.msg} at character "
            f"{exc.pos}); the tool did not run. Send one JSON object. {_schema_hint(tool)}",
            "arguments not valid JSON",
        ) from None
    except _NotJson as exc:
        raise InvalidCall(
            f"the arguments for {tool.name} contain {exc}, which is not a JSON number; the "
            "tool did not run. Send finite numbers.",
            f"{exc} is not a number",
        ) from None
    except TooDeep:
        raise InvalidCall(
            f"the arguments for {tool.name} are {depth_hint}", "nested too deeply"
        ) from None
    except TooLong:
        raise InvalidCall(
            f"the arguments for {tool.name} hold a number too long to read (over 4,300 "
            "digits); the tool did not run. Send it as a string if it is one.",
            "a number too long",
        ) from None
    if too_deep(args, MAX_ARGUMENT_DEPTH):
        raise InvalidCall(f"the arguments for {tool.name} are {depth_hint}", "nested too deeply")
    if not isinstance(args, dict):
        raise InvalidCall(
            f"the arguments for {tool.name} must be a JSON object, not {type(args).__name__}. "
            + _schema_hint(tool),
            "arguments not a JSON object",
        )
    return args
