"""The MCP server that lends agentcli's tools: the SDK's low-level server, whose tools/list
is the session's tools with their annotations and whose tools/call goes through the
session's executor — parse, validate, the steps around the call (the policy's decision
among them), the sandboxed run — as a model's call in a run does.

One session serves every client of the process: its policy remembers what a client allowed
for the session, its background jobs outlive a call. A cancelled request
(notifications/cancelled) cancels the call, which stops the command's process group; a
running command's output is sent as progress to a client that asked for it. Nothing but
the protocol goes to stdout: the SDK points fd 1 at stderr while it serves stdio."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from agentcli import __version__
from agentcli.assembly.session import SharedParts, lent_tools, open_agent
from agentcli.conversation import events as ev
from agentcli.conversation.messages import ToolCall, new_id
from agentcli.mcp_serve.asking import ask_client, current_request
from agentcli.mcp_serve.lending import call_result, listed
from agentcli.records import dataclass

if TYPE_CHECKING:
    from agentcli.agent.call_steps import Proceed, Stage, ToolCallFlight
    from agentcli.agent.session import Agent
    from agentcli.output.base import RunSummary
    from agentcli.settings import RunSettings
    from agentcli.tools.base import ToolOutput

INSTRUCTIONS = (
    "agentcli's tools, run under agentcli's risk policy, workspace boundary and OS sandbox. "
    "A call the policy would ask about is put to you as an elicitation when you offer one; "
    "otherwise it is refused with the flag that allows it."
)

# The SDK logs what it handles; on stdio only our own one-line notices may reach stderr.
for _name in ("mcp", "mcp_types"):
    logging.getLogger(_name).addHandler(logging.NullHandler())
    logging.getLogger(_name).propagate = False


@dataclass(slots=True)
class LendOptions:
    settings: RunSettings
    configured: bool = False  # also the configuration's, plug-ins' and MCP servers' tools


class KeptOutputs:
    """The step around each call that ran: keeps its output by call id, for what the
    result message has not (the tool's data, its images)."""

    stage: Stage = "around"

    def __init__(self) -> None:
        self.outputs: dict[str, ToolOutput] = {}

    async def __call__(self, flight: ToolCallFlight, proceed: Proceed) -> ToolOutput:
        output = await proceed(flight)
        self.outputs[flight.call.id] = output
        return output


class ProgressRelay:
    """An output of the session's events: a running call's progress, sent to the request
    that made it (as notifications/progress, when the client gave a progress token)."""

    def __init__(self) -> None:
        self.requests: dict[str, Any] = {}  # call id -> the MCP request context
        self.sending: set[asyncio.Task[None]] = set()

    def handle(self, event: ev.Event) -> None:
        if not isinstance(event, ev.Progress):
            return
        request = self.requests.get(event.tool_call_id)
        if request is None:
            return
        lines = event.lines or ([event.message] if event.message else [])
        amount = event.bytes if event.bytes is not None else (event.progress or 0)
        task = asyncio.ensure_future(
            request.session.report_progress(float(amount), event.total, "\n".join(lines) or None)
        )
        self.sending.add(task)
        task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task[None]) -> None:
        self.sending.discard(task)
        if not task.cancelled():
            task.exception()  # a client that left is told nothing; the call goes on

    def finish(self, summary: RunSummary) -> None:
        pass


class Lender:
    """The session whose tools are lent, and what a request asks of it."""

    def __init__(self, options: LendOptions) -> None:
        self.options = options
        self.kept = KeptOutputs()
        self.progress = ProgressRelay()
        self.shared: SharedParts | None = None
        self.agent: Agent | None = None

    async def open(self) -> None:
        """The composition root's session for these settings, with the tools lent (on the
        running loop: the sources start in its background)."""
        from agentcli.sessions.session import Session

        settings = self.options.settings
        self.shared = lent_tools(settings, configured=self.options.configured)
        session = Session.create(settings.workspace, "mcp-serve")
        try:
            self.agent = open_agent(
                settings,
                session,
                [self.progress],
                approver=ask_client,
                shared=self.shared,
                steps=[self.kept],
            )
        except BaseException:
            session.close()
            await self.shared.aclose()
            raise
        for warning in await self.agent.registry.refresh():
            _notice(warning)

    async def aclose(self) -> None:
        if self.agent is not None:
            await self.agent.aclose()
        if self.shared is not None:
            await self.shared.aclose()

    def _agent(self) -> Agent:
        if self.agent is None:
            raise RuntimeError("the lender is not open")
        return self.agent

    async def list_tools(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        agent = self._agent()
        for warning in await agent.registry.refresh():
            _notice(warning)
        network = agent.sandbox.settings.allow_network
        return types.ListToolsResult(tools=[listed(t, network=network) for t in agent.registry])

    async def call_tool(self, ctx: Any, params: Any) -> Any:
        """One call, through the executor as a model's call would go; a refusal, a bad
        argument or a tool's failure is a result with isError, never a protocol error."""
        agent = self._agent()
        await agent.registry.refresh()
        call = ToolCall(new_id("call"), params.name, json.dumps(params.arguments or {}))
        agent.emit(ev.ToolCallStart(tool_call_id=call.id, tool_call_name=call.name))
        agent.emit(ev.ToolCallArgs(tool_call_id=call.id, delta=call.arguments))
        agent.emit(ev.ToolCallEnd(tool_call_id=call.id))
        asked = current_request.set(ctx)
        self.progress.requests[call.id] = ctx
        try:
            [message] = await agent.executor.run([call])
        finally:
            current_request.reset(asked)
            self.progress.requests.pop(call.id, None)
        output = self.kept.outputs.pop(call.id, None)
        return call_result(message.content, message.error is not None, output)


def _notice(text: str) -> None:
    import sys

    from agentcli.output.visible import visible
    from agentcli.text.decoding import shown

    sys.stderr.write(f"agentcli mcp serve: {visible(shown(text))}\n")
    sys.stderr.flush()


def mcp_server(lender: Lender) -> Any:
    """The SDK's low-level server, answering with the lender."""
    from mcp.server.lowlevel import Server

    return Server(
        "agentcli",
        version=__version__,
        title="agentcli",
        instructions=INSTRUCTIONS,
        on_list_tools=lender.list_tools,
        on_call_tool=lender.call_tool,
    )


async def serve_stdio(options: LendOptions) -> None:
    """Serves one client on stdin and stdout until it closes stdin."""
    import anyio
    from mcp.server.stdio import stdio_server

    from agentcli.mcp_serve.bad_lines import answer_bad_lines
    from agentcli.mcp_serve.stdin_end import InFlight

    lender = Lender(options)
    server = mcp_server(lender)
    in_flight = InFlight()  # the client's requests are answered before the end of stdin ends it
    async with stdio_server() as (read, write):
        checked_writer, checked = anyio.create_memory_object_stream[Any](0)
        answers_writer, answers = anyio.create_memory_object_stream[Any](0)
        await lender.open()
        try:
            async with anyio.create_task_group() as group, checked:
                group.start_soon(answer_bad_lines, read, checked_writer, write, _notice, in_flight)
                group.start_soon(in_flight.relay, answers, write, checked_writer)
                async with answers_writer:
                    options = server.create_initialization_options()
                    await server.run(checked, answers_writer, options)
        finally:
            await lender.aclose()
