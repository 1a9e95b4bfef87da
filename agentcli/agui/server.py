"""`agentcli serve`: an AG-UI HTTP endpoint. `POST /` takes a RunAgentInput and answers with
the run's events as `text/event-stream`; `GET /health` answers ok (for load balancers).

Each run opens its thread's session (kept in memory between runs: only what its file gained
since is read, off the event loop), runs one turn under the same policy as the CLI, and
closes it; many runs go on at once in one process (one at a time per thread)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any

from agentcli.agent.session import Agent
from agentcli.agui import wire
from agentcli.agui.client_view import ClientView
from agentcli.agui.run_inputs import RunInputs
from agentcli.agui.state import STATE_TOOL, ThreadState, UpdateStateTool, has_state
from agentcli.agui.stores import Claim, StoreFailed, thread_store
from agentcli.agui.threads import KEPT_THREADS, ClientLead, Plan, plan_run, same_history
from agentcli.assembly.session import SharedParts, new_provider, open_agent
from agentcli.conversation import events as ev
from agentcli.conversation.fold import StreamFold
from agentcli.conversation.messages import Message, ToolCall
from agentcli.errors import AgentCliError, UsageError
from agentcli.http_guard import Rejected, check_bearer, check_browser, is_loopback
from agentcli.json_depth import MAX_DEPTH, too_deep
from agentcli.output.base import RunSummary
from agentcli.process.run import LiveTrees
from agentcli.records import dataclass, field
from agentcli.risk import ApprovalRequest
from agentcli.settings import RunSettings

MAX_REQUEST_BYTES = 4 * 1024 * 1024
MAX_CONTEXT_CHARS = 32_000  # context, state and system notes a client may add, together
_TOOL_NAME = r"^[A-Za-z0-9_-]{1,64}$"


@dataclass(slots=True)
class ServeOptions:
    settings: RunSettings
    token: str | None = None  # a bearer token every request must carry
    cors_origins: list[str] = field(default_factory=list)
    max_request_bytes: int = MAX_REQUEST_BYTES
    host: str = "127.0.0.1"  # where it listens: on loopback, the Host header is checked
    token_generated: bool = False  # made at start: printed for the user to give clients
    store: str | None = None  # a PostgreSQL URL replicas share; None: the sessions directory
    lease_seconds: float = 5.0  # a run's claim on its thread, renewed while it runs


class ClientLeft(Exception):
    """The client hung up before its request was read: nobody to answer."""


def log_line(text: str) -> None:
    """One quiet line on the server's stderr (uvicorn logs only warnings)."""
    import sys

    from agentcli.output.visible import visible
    from agentcli.text.decoding import shown

    sys.stderr.write(f"agentcli serve: {visible(shown(text))}\n")
    sys.stderr.flush()


class Relay:
    """An output of the agent that queues each event, encoded, for the HTTP response. It
    folds the stream, so that a run cut short still closes what it opened before its end."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.fold = StreamFold()
        # The thread's messages as a MESSAGES_SNAPSHOT record, encoded; set once the run
        # has a thread. Sent at the run's end only when the client could not have them from
        # the run's events (`view`, which mirrors them as @ag-ui/client applies them).
        self.snapshot: Callable[[], str] | None = None
        self.thread: Callable[[], list[Message]] = list
        self.view: ClientView | None = None
        self.ended_with_snapshot = False
        self.confirms: list[tuple[str | None, dict[str, Any]]] = []  # (parent, call) asked
        self.finished = False  # the run ended with RUN_FINISHED, a success
        # The run's last event, held until its thread is released: a store that failed
        # meanwhile turns it into a RUN_ERROR saying so (see `end`).
        self.last: ev.Event | None = None

    def handle(self, event: ev.Event) -> None:
        if isinstance(event, (ev.RunFinished, ev.RunError)):
            outcome = getattr(event, "outcome", None) or {}
            self.finished = isinstance(event, ev.RunFinished) and outcome.get("type") == "success"
            for end in self.fold.unclosed():
                self._put(end)
            if isinstance(event, ev.RunError) or self._needs_snapshot():
                self.send_snapshot()  # a RUN_ERROR always: the client may hold half a message
                self.ended_with_snapshot = True
            self.last = event
            return
        self._put(event)

    def _needs_snapshot(self) -> bool:
        view = self.view
        return view is None or view.needs_snapshot(self.thread(), self.confirms)

    def send_snapshot(self) -> None:
        if self.snapshot is not None:  # the stream folds no snapshot: it is queued as is
            self.queue.put_nowait(self.snapshot())

    def end(self, problem: str | None) -> None:
        """The run's last event, or, when the store failed it, one RUN_ERROR instead."""
        last, self.last = self.last, None
        if problem is not None:
            self.finished = False
            last = ev.RunError(message=problem, code="store_unavailable")
            if not self.ended_with_snapshot:  # a RUN_ERROR end has one, as any other
                self.send_snapshot()
        if last is not None:
            self._put(last)
        # The run is over: its mirror, which holds the thread's messages as they were at
        # the start, goes now, not when the collector finds the run's reference cycles.
        self.view = None

    def _put(self, event: ev.Event) -> None:
        self.fold.apply(event)
        if self.view is not None:
            self.view.apply(event)
        self.queue.put_nowait(wire.encode(event))

    def finish(self, summary: RunSummary) -> None:
        pass


class AgentServer:
    def __init__(self, options: ServeOptions) -> None:
        self.options = options
        self.closing: set[asyncio.Future[None]] = set()  # agents closing after their run
        self.runs = 0
        # Where threads are kept, and which have a run in progress (agentcli.agui.stores).
        self.store = thread_store(options.store, options.lease_seconds)
        # What every run shares: one provider (its HTTP client's pool), made by the first
        # run, and the process trees, stopped when the server stops.
        self.shared = SharedParts(processes=LiveTrees())
        self.inputs = RunInputs()  # requests validated, a thread's known lead not again
        # What each recent thread's last run planned of its client's messages.
        self.leads: OrderedDict[str, ClientLead] = OrderedDict()

    def shared_parts(self) -> SharedParts:
        if self.shared.provider is None:
            self.shared.provider = new_provider(self.options.settings)
        return self.shared

    async def aclose(self) -> None:
        """The server is stopping: nothing it started outlives it."""
        await self.shared.aclose()
        await self.store.aclose()

    # --- the request, checked before anything runs

    def check_browser(self, headers: Any, *, posting: bool) -> None:
        """What a web page could send on its own, refused: a foreign Host on loopback (DNS
        rebinding), an Origin not allowed (a cross-site request), and, to run, a body that
        is not JSON (a "simple" text/plain request needs no preflight)."""
        check_browser(
            headers,
            listen_host=self.options.host,
            cors_origins=self.options.cors_origins,
            hint=" (serve --cors-origin ORIGIN)",
        )
        if posting:
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            if kind != "application/json":
                raise Rejected(415, "the body must be JSON (Content-Type: application/json)")

    def check_auth(self, headers: Any) -> None:
        check_bearer(headers, self.options.token)

    async def read_body(self, request: Any) -> bytes:
        limit = self.options.max_request_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise Rejected(413, f"the request is larger than {limit} bytes")
        from starlette.requests import ClientDisconnect

        body = bytearray()
        try:
            async for chunk in request.stream():
                body.extend(chunk)
                if len(body) > limit:
                    raise Rejected(413, f"the request is larger than {limit} bytes")
        except ClientDisconnect:
            raise ClientLeft from None
        return bytes(body)

    def parse_input(self, body: bytes) -> Any:
        from pydantic import ValidationError

        from agentcli.text.decoding import contents, loads

        done = self.inputs.read(body)  # a thread's messages sent again are not parsed again
        try:  # text from outside: a bad byte is U+FFFD, no string keeps a lone surrogate
            data = done.data if done is not None else loads(contents(body))
        except ValueError as error:
            raise Rejected(400, f"the body is not JSON: {error}") from None
        try:
            run_input = self.inputs.validate(data, len(body), done)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "body"
            more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
            raise Rejected(
                422, f"not a valid RunAgentInput: {where}: {first.get('msg')}{more}"
            ) from None
        deep = deepest_free_value(run_input)
        if deep is not None:  # kept and sent on, it would fail every later run
            raise Rejected(
                422, f"not a valid RunAgentInput: {deep}: nested deeper than {MAX_DEPTH} levels"
            )
        return run_input

    # --- one run

    def frontend_specs(self, run_input: Any, server_tools: set[str]) -> list[dict[str, Any]]:
        import re

        specs = []
        for tool in run_input.tools or []:
            if tool.name == wire.CONFIRM_TOOL or tool.name in server_tools:
                continue  # the server's own tools win; confirm_tool_call is not the model's
            if not re.match(_TOOL_NAME, tool.name):
                raise Rejected(422, f"tool name {tool.name!r} must match {_TOOL_NAME}")
            parameters = tool.parameters or {"type": "object", "properties": {}}
            specs.append(
                {"name": tool.name, "description": tool.description, "parameters": parameters}
            )
        return specs

    async def start_run(self, run_input: Any) -> tuple[Relay, asyncio.Task[None], Agent | None]:
        thread_id = run_input.thread_id
        settings = self.options.settings
        relay = Relay()
        try:
            claim = await self.store.claim(
                thread_id,
                settings.workspace,
                str(settings.model),
                settings.config.get("images.max_bytes"),
            )
        except StoreFailed as failed:  # the database is away: one line, as a run's end
            return (
                relay,
                asyncio.create_task(self._failed(relay, str(failed), "store_unavailable")),
                None,
            )
        session = claim.session
        try:
            agent = open_agent(settings, session, [relay], shared=self.shared_parts())
        except AgentCliError as error:
            session.close()
            await self.store.release(claim, clean=False)
            return relay, asyncio.create_task(self._failed(relay, str(error))), None
        try:
            plan = self._prepare(agent, run_input, relay)
        except Rejected:
            await agent.aclose(stop_all=False)
            await self.store.release(claim, clean=False)
            raise
        claim.on_problem = agent.cancel  # the store failed mid-run: the run stops
        task = asyncio.create_task(self._run(agent, relay, run_input, plan, claim))
        return relay, task, agent

    def _prepare(self, agent: Agent, run_input: Any, relay: Relay) -> Plan:
        agent.thread_id = run_input.thread_id
        server_tools = set(agent.registry.names())
        specs = self.frontend_specs(run_input, server_tools)
        conversation = agent.session.conversation
        # The validated messages themselves: read, never changed, by the plan and the kept
        # lead; a copy of thousands each run would be one more list for the collector.
        plan = plan_run(
            conversation, run_input.messages, server_tools, self._lead(run_input.thread_id)
        )
        last = conversation.messages[-1].role if conversation.messages else None
        if plan.empty and last not in ("user", "tool"):
            raise Rejected(
                422, "nothing new to run: send a new user message or the pending tool results"
            )
        plan.state = self._thread_state(agent, run_input)
        plan.forwarded = run_input.forwarded_props
        agent.loop.tools = [*agent.loop.tools, *specs]
        agent.loop.frontend_specs = list(specs)
        agent.loop.frontend = {spec["name"] for spec in specs}
        agent.loop.system += context_section(run_input, plan.notes, plan.state.value)
        if any(tool.name == wire.CONFIRM_TOOL for tool in run_input.tools or []):
            agent.executor.decision.defer = lambda call, request, reasons: self._confirm(
                agent, relay, call, request, reasons
            )
        snapshots = self.store.snapshots(run_input.thread_id)
        relay.thread = lambda: agent.session.conversation.messages
        relay.snapshot = lambda: snapshots.record(relay.thread(), relay.confirms)
        relay.view = ClientView()
        return plan

    def _lead(self, thread_id: str) -> ClientLead:
        lead = self.leads.pop(thread_id, None) or ClientLead()
        self.leads[thread_id] = lead
        while len(self.leads) > KEPT_THREADS:
            self.leads.popitem(last=False)
        return lead

    def _thread_state(self, agent: Agent, run_input: Any) -> ThreadState:
        """The run's state: the client's when it sends one (recorded as the thread's),
        the thread's otherwise. With state, the model gets `update_state` to change it."""
        session = agent.session
        sent = run_input.state
        if has_state(sent) and sent != session.state:
            session.handle(ev.StateSnapshot(snapshot=sent))  # the thread's from now on
        limit = self.options.settings.config.get("limits.state")
        state = ThreadState(sent if has_state(sent) else session.state, agent.emit, limit)
        if has_state(state.value) and STATE_TOOL not in agent.registry.names():
            agent.registry.add(UpdateStateTool(state))
        return state

    def _confirm(
        self,
        agent: Agent,
        relay: Relay,
        call: ToolCall,
        request: ApprovalRequest,
        reasons: list[str],
    ) -> None:
        """An approval nobody here can give: a call of the client's confirm_tool_call."""
        confirm_id = wire.CONFIRM_PREFIX + call.id
        messages = agent.session.conversation.messages
        parent = next((m.id for m in reversed(messages) if m.role == "assistant"), None)
        arguments = {
            "toolCallId": call.id,
            "tool": request.tool,
            "arguments": request.arguments,
            "risk": request.assessment.risk.label,
            "reason": "; ".join(reasons),
        }
        agent.emit(
            ev.ToolCallStart(
                tool_call_id=confirm_id,
                tool_call_name=wire.CONFIRM_TOOL,
                parent_message_id=parent,
            )
        )
        agent.emit(ev.ToolCallArgs(tool_call_id=confirm_id, delta=json.dumps(arguments)))
        agent.emit(ev.ToolCallEnd(tool_call_id=confirm_id))
        agent.pending.append(confirm_id)
        function = {"name": wire.CONFIRM_TOOL, "arguments": json.dumps(arguments)}
        call = {"id": confirm_id, "type": "function", "function": function}
        relay.confirms.append((parent, call))

    async def _run(
        self, agent: Agent, relay: Relay, run_input: Any, plan: Plan, claim: Claim
    ) -> None:
        self.runs += 1
        try:
            await agent.run_turn(
                None, run_id=run_input.run_id, prelude=lambda: apply(agent, plan, relay, run_input)
            )
        finally:
            # Shielded: a client that leaves as the run ends cancels this task, and a close
            # cut short would keep the thread's session file locked (or its lease held).
            closing = asyncio.ensure_future(self._close(agent, relay, claim))
            self.closing.add(closing)  # a reference, so it finishes even if we are cancelled
            closing.add_done_callback(self.closing.discard)
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.shield(closing)
            relay.queue.put_nowait(None)

    async def _close(self, agent: Agent, relay: Relay, claim: Claim) -> None:
        """The run's session closed, then its thread released: the session is kept for the
        next run when the run ended cleanly (what it holds is then what the store holds).
        Then the run's last event, or the store's failure instead."""
        clean = relay.finished
        try:
            await agent.aclose(stop_all=False)
        except BaseException:
            clean = False
            raise
        finally:
            problem = await self.store.release(claim, clean=clean and relay.finished)
            relay.end(problem)

    async def _failed(self, relay: Relay, message: str, code: str = "config") -> None:
        relay.handle(ev.RunError(message=message, code=code))
        relay.end(None)
        relay.queue.put_nowait(None)

    async def stream(
        self, relay: Relay, task: asyncio.Task[None], agent: Agent | None
    ) -> AsyncIterator[str]:
        try:
            while (item := await relay.queue.get()) is not None:
                yield item
        finally:
            if not task.done():  # the client went away: cancel the turn as Ctrl-C would,
                if agent is None or not agent.cancel():  # leaving the thread valid
                    task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task


async def apply(agent: Agent, plan: Plan, relay: Relay, run_input: Any) -> None:
    """A served run's prelude: the client's results and answers, then its new messages;
    then what the client's view lacks of the thread (its messages, its state), said as
    snapshots, and the client's forwardedProps recorded in the session."""
    conversation = agent.session.conversation
    for message in plan.results:
        conversation.add(message)
    if plan.approved_calls:
        for result in await agent.executor.run(plan.approved_calls, decided=plan.approvals):
            conversation.add(result)
    conversation.repair()  # calls still unanswered were abandoned by the client
    for message in plan.messages:
        conversation.add(message)
    running = {call.id for call in plan.approved_calls}
    lead = plan.lead
    theirs = lead.keys(run_input.messages, plan.planned) if lead is not None else None
    matched = lead.matched(plan.planned) if lead is not None else 0
    keys = conversation.indexed().keys
    same = same_history(run_input.messages, conversation.messages, running, keys, theirs, matched)
    if lead is not None:  # told now: what the run planned is in the thread
        lead.record(conversation, run_input.messages, plan, theirs, same and not running)
    if relay.snapshot and not same:
        relay.send_snapshot()  # to the client only: the session has its messages
    if relay.view is not None:
        # The client's view from here: the thread's messages when a start snapshot just
        # gave them; its own history when that is the thread's, unless it holds what the
        # thread keeps none of (system messages, the confirm_tool_call exchange: only an
        # end snapshot takes them away) or this run ran approved calls (their results,
        # the thread's already, reached the client as events before this point).
        own = not (plan.unkept or running)
        relay.view.start(conversation, snapshot=not same, own=own)
    state = plan.state
    if state is not None and has_state(state.value) and not has_state(run_input.state):
        relay.handle(ev.StateSnapshot(snapshot=state.value))
    if plan.forwarded not in (None, {}):
        agent.session.handle(ev.Custom(name="forwarded_props", value=plan.forwarded))


def deepest_free_value(run_input: Any) -> str | None:
    """The first of the request's free-form JSON values (the SDK types them as any JSON)
    that nests past MAX_DEPTH, by its field's name; None when none does."""
    free = {"state": run_input.state, "forwardedProps": run_input.forwarded_props}
    for number, tool in enumerate(run_input.tools or []):
        free[f"tools.{number}.parameters"] = tool.parameters
    return next((name for name, value in free.items() if too_deep(value)), None)


def context_section(run_input: Any, notes: list[str], state: Any = None) -> str:
    """The client's context, the thread's state, the client's forwardedProps and its
    system messages, for the model, bounded."""
    parts = [note for note in notes if note.strip()]
    for item in run_input.context or []:
        parts.append(f"{item.description}: {item.value}")
    if has_state(state):
        parts.append(
            f"Application state (JSON; change it with {STATE_TOOL}): "
            + json.dumps(state, default=str)
        )
    if run_input.forwarded_props not in (None, {}):
        parts.append(
            "Properties the application forwarded (JSON): "
            + json.dumps(run_input.forwarded_props, default=str)
        )
    if not parts:
        return ""
    text = "\n".join(f"- {part}" for part in parts)
    if len(text) > MAX_CONTEXT_CHARS:
        text = text[:MAX_CONTEXT_CHARS] + "\n[the rest of the client's context was cut]"
    return "\n\n# Context from the application (AG-UI client)\n" + text


def _serve_extra() -> str:
    from agentcli.install_source import extra_install_command

    return extra_install_command("serve")


def build_app(options: ServeOptions) -> Any:
    try:
        from starlette.applications import Starlette
        from starlette.middleware import Middleware
        from starlette.middleware.cors import CORSMiddleware
        from starlette.requests import Request
        from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
        from starlette.routing import Route
    except ImportError:
        raise UsageError("agentcli serve needs the serve extra: " + _serve_extra()) from None
    server = AgentServer(options)

    async def run(request: Request) -> Any:
        try:
            server.check_browser(request.headers, posting=True)
            server.check_auth(request.headers)
            run_input = server.parse_input(await server.read_body(request))
            relay, task, agent = await server.start_run(run_input)
        except Rejected as rejected:
            return JSONResponse({"error": str(rejected)}, status_code=rejected.status)
        except ClientLeft:
            client = f"{request.client.host}:{request.client.port}" if request.client else "?"
            log_line(f"a client ({client}) hung up before its request was read")
            return PlainTextResponse("", status_code=400)  # nobody reads it
        except Exception as bug:  # still one answer and one line, never a traceback
            log_line(f"internal error on POST /: {type(bug).__name__}: {bug}")
            error = {"error": f"internal error: {type(bug).__name__}"}
            return JSONResponse(error, status_code=500)
        return StreamingResponse(
            server.stream(relay, task, agent),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def health(request: Request) -> Any:
        try:
            server.check_browser(request.headers, posting=False)
        except Rejected as rejected:
            return JSONResponse({"error": str(rejected)}, status_code=rejected.status)
        problem = await server.store.health()
        if problem is not None:  # a load balancer takes this replica out until it is back
            return JSONResponse({"error": problem}, status_code=503)
        return PlainTextResponse("ok\n")

    middleware = []
    if options.cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=options.cors_origins,
                allow_methods=["POST", "GET", "OPTIONS"],
                allow_headers=["Authorization", "Content-Type", "Accept"],
            )
        )

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        await server.store.start()  # migrations, before the first request
        yield
        await server.aclose()

    app = Starlette(
        routes=[Route("/", run, methods=["POST"]), Route("/health", health, methods=["GET"])],
        middleware=middleware,
        lifespan=lifespan,
    )
    app.state.server = server
    return app


def serve(options: ServeOptions, host: str, port: int) -> int:
    """Runs the server until SIGINT/SIGTERM."""
    if not is_loopback(host) and options.token is None:  # checked by the command too
        raise UsageError(f"--host {host} needs --token-env NAME")
    from agentcli.plugins import keep_found

    keep_found()  # found and loaded by the first run, not again by each
    app = build_app(options)
    try:
        import uvicorn
    except ImportError:
        raise UsageError("agentcli serve needs the serve extra: " + _serve_extra()) from None
    import sys

    shown = f"[{host}]" if ":" in host else host
    sys.stderr.write(f"agentcli: serving AG-UI on http://{shown}:{port}/ (Ctrl-C stops)\n")
    if options.token is not None and options.token_generated:
        sys.stderr.write(
            f"agentcli: token: {options.token} (clients send Authorization: Bearer TOKEN; "
            "--token-env NAME chooses it)\n"
        )
    sys.stderr.flush()
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False, lifespan="on"
    )
    uvicorn.Server(config).run()
    return 0
