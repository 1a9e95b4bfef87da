"""One MCP server as a tool source, through the official `mcp` SDK.

The connection lives in a task of its own (the SDK's transports are anyio contexts that
must be entered and left by one task); calls from the agent's tasks go through its session.
A start has a timeout; a failure is kept as the source's problem and its tools are absent.
A server that dies gives its pending calls error results and is restarted once, at the
next call. Closing ends the server's whole process tree (the SDK kills its process group;
descendants that left the group are found with psutil and killed too)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
from pathlib import Path
from typing import Any

import psutil

from agentcli.conversation.events import now_ms
from agentcli.mcp.cancellation import CancelledCalls
from agentcli.mcp.client_features import ClientHost, ServerFeatures
from agentcli.mcp.config import ServerConfig
from agentcli.mcp.flights import Flight, Flights
from agentcli.mcp.resources import ServerResources
from agentcli.mcp.results import capped
from agentcli.mcp.shapes import answer_name, is_wrong_shape, wrong_shape
from agentcli.mcp.tools import McpTool, content_parts, make_tool, result_parts
from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from agentcli.tools.content import TextPart, render_text
from agentcli.tools.dynamic import DynamicToolError
from agentcli.tools.source import ToolSource

STOP_GRACE = 2.0  # seconds between SIGTERM and SIGKILL at close
GARBAGE_GRACE = 3.0  # seconds a start waits for the protocol after a line that is not it
# CPU seconds the server's processes must use in a GARBAGE_GRACE for the wait to go on: a
# server that printed a banner and is still importing is working; junk then idle is not.
BUSY_CPU = 0.05
LOG_TAIL = 300  # characters of the server's stderr quoted when it fails


# The SDK logs a dying server's broken pipes; with no handler, Python would print them on
# our stderr. What went wrong is said once, by us.
for _name in ("mcp", "client"):
    logging.getLogger(_name).addHandler(logging.NullHandler())
    logging.getLogger(_name).propagate = False


class StartFailed(Exception):
    """The server could not be started; the message says why, in one line."""


class NotMcp(StartFailed):
    """It ran, but what it wrote on stdout is not MCP: no sandbox profile changes that."""


class EndlessPages(Exception):
    """A tools/list whose cursors never end: the same one again, or page after page."""


MAX_TOOL_PAGES = 1000  # pages of tools/list followed (a server with 1,000 tools a page: a million)


class StartRefused(StartFailed):
    """It answered, with an error of its own (to initialize, to tools/list): the sandbox
    is named only when the error's words say it kept something from the server."""


def innermost_error(error: BaseException) -> BaseException:
    """The first real error inside the exception groups anyio's task groups raise."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def had_answer(error: BaseException) -> bool:
    """Whether a call that raised `error` had the server's answer: an error it sent, or an
    answer of a shape MCP does not have (not a timeout, a cancel or a closed connection)."""
    from mcp import MCPError
    from mcp_types import REQUEST_TIMEOUT

    if is_wrong_shape(error):
        return True
    if not isinstance(error, MCPError) or connection_closed(error):
        return False
    return error.code != REQUEST_TIMEOUT


def program_problem(command: str) -> str:
    """Why `command` could not be started, as the file says (the sandbox's launcher reports
    every failure to start as "not found")."""
    path = command if os.sep in command else shutil.which(command) or ""
    if path and os.path.isdir(path):
        return f"{command} is a directory, not a program"
    if path and os.path.exists(path) and not os.access(path, os.X_OK):
        return f"{command} is not executable (chmod +x it, or name its interpreter as command)"
    return f"program not found: {command}"


def against_output_schema(error: BaseException) -> str | None:
    """One line for the SDK's check of a result against the tool's outputSchema (its
    words and then jsonschema's several-line report), None for any other error."""
    said = str(error)
    if not isinstance(error, RuntimeError) or not said.startswith(_OUTPUT_CHECKS):
        return None
    first = said.split("\n", 1)[0]
    complaint = (first.split(": ", 1)[1] if ": " in first else first)[:200]
    if said.startswith("Invalid schema"):
        return f"its outputSchema is not a schema its results can be checked by: {complaint}"
    return f"its result does not match its outputSchema: {complaint}"


_OUTPUT_CHECKS = ("Invalid structured content returned by tool", "Invalid schema for tool")


def connection_closed(error: BaseException) -> bool:
    """Whether `error` is the SDK's word that the connection closed. Its code, -32000, is
    also JSON-RPC's generic server error, which servers send as their own answer: only
    the SDK's own message tells the two apart."""
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED

    if not isinstance(error, MCPError) or error.code != CONNECTION_CLOSED:
        return False
    return error.error.message == "Connection closed"


class McpServer(ToolSource):
    kind = "mcp"

    def __init__(
        self,
        config: ServerConfig,
        workspace: Path,
        spawn_lock: asyncio.Lock,
        log_dir: Path,
        sandbox: Any = None,
        host: ClientHost | None = None,
    ) -> None:
        """`sandbox`: the session's (agentcli.sandbox.confine.Sandbox), in which a stdio
        server runs in the profile its configuration names, read-only if it names none
        (agentcli.mcp.reach). `host`: what the
        session lends its servers (roots, the person, the model; client_features)."""
        super().__init__()
        self.features = ServerFeatures(config, host or ClientHost(roots=(str(workspace),)))
        self.config = config
        self.sandbox = sandbox
        self.profile = config.profile  # None for a server reached by URL
        self.reach: Any = None  # what it reaches in the sandbox (agentcli.mcp.reach.Reach)
        self._guard: Any = None  # the protected paths' watch while it may write them
        self.name = f"mcp:{config.name}"
        self.workspace = workspace
        self.state = "not started"  # running | failed | exited | stopped
        self.error: str | None = None
        self.server_info = ""
        self.capabilities: Any = None
        self.prompts: list[Any] = []
        self.open_world: list[str] = []  # its tools with openWorldHint
        self._spawn_lock = spawn_lock  # one spawn at a time, so its new child is known
        self._log_path = log_dir / f"{config.name}.log"
        self._log_start = 0  # the offset in it where the latest start's stderr begins
        self._tools: list[McpTool] = []
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._pid: int | None = None
        self._restarted = False
        self._answers: Any = None  # what the HTTP responses said (agentcli.mcp.transports)
        self._oauth: Any = None  # the OAuth provider of a server reached by URL
        self.http_transport: str | None = None  # "streamable-http" | "sse", once connected
        self._reconnect = asyncio.Lock()
        self._garbage: str | None = None  # the first line on stdout that was not JSON-RPC
        self._garbled = asyncio.Event()
        # Its calls in flight: an unreadable answer ends the call it was for.
        self.flights = Flights(had_answer)
        self.cancelled = CancelledCalls()  # told to the server before it is stopped
        self.catalog = ServerResources(self)  # resources, and prompt and resource list changes
        self.started_at = self.ready_at = 0  # ms since the epoch, as event timestamps

    # --- the source interface

    async def start(self) -> None:
        self.started_at = now_ms()
        self.error = None  # a start again (after a login) says only its own failure
        try:
            await self._connect_in_a_profile()
        except StartFailed as failure:
            self.state, self.error = "failed", str(failure)
            self.problems.append(
                f"MCP server {self.config.name} did not start: {failure}; its tools are absent"
            )
        self.ready_at = now_ms()

    @property
    def confined(self) -> bool:
        return self.config.url is None and self.sandbox is not None and self.sandbox.active

    async def _connect_in_a_profile(self) -> None:
        """In the profile the user chose, read-only when they chose none: never a wider one
        found by trying (the server does not choose its reach). A failure the sandbox may
        explain says which setting would let it start."""
        if not self.confined:
            self.profile = None if self.config.url else "none"
            try:
                await self._connect()
            except StartFailed:
                if not self._falls_back_to_sse():
                    raise
                await self._connect()  # the legacy HTTP+SSE transport
            return
        try:
            await self._connect()
        except NotMcp:
            raise  # the same in every profile
        except StartFailed as failure:
            from agentcli.mcp.reach import call_hint, start_hint

            cwd = self.config.working_directory(self.workspace)
            said = f"{failure}\n{self._log_lines()}"
            if isinstance(failure, StartRefused):
                hint = call_hint(self.config, self.reach, said, [], cwd)
            else:
                hint = start_hint(self.config, self.reach, said, cwd)
            raise StartFailed(f"{failure}; {hint}" if hint else str(failure)) from None

    def _falls_back_to_sse(self) -> bool:
        """The streamable HTTP attempt was answered as a legacy server answers: use SSE."""
        from agentcli.mcp import transports

        if self.http_transport != transports.STREAMABLE or self._answers is None:
            return False
        if not transports.may_fall_back(self.config, self._answers):
            return False
        self.http_transport = transports.SSE
        return True

    def status(self) -> dict[str, Any]:
        """For the event stream: the state, the tools, and when the start began and ended."""
        status = {
            "server": self.config.name,
            "state": self.state,
            "tools": len(self._tools),
            "startedAt": self.started_at,
            "readyAt": self.ready_at,
        }
        if self.profile is not None:
            status["sandbox"] = self.profile
            status["sandboxChosen"] = self.config.sandbox is not None
        return status

    def tools(self) -> list[Tool]:
        return list(self._tools)

    async def refresh(self) -> None:
        self.changed = False
        if self._session is not None:
            with contextlib.suppress(Exception):  # a dead server: found at the next call
                self._set_tools(await self._list_tools(self._session))

    async def call(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        from mcp import MCPError
        from mcp_types import REQUEST_TIMEOUT

        session = await self.live_session()
        assert isinstance(tool, McpTool)
        limit, setting = self.config.timeout_of(tool.remote_name)
        notes = self.features.call_notes()  # requests of the server declined meanwhile
        loop = asyncio.get_running_loop()
        deadline = asyncio.timeout(limit)

        # Ended at once by an answer the SDK could not read (agentcli.mcp.flights).
        flight = Flight(lambda: deadline.reschedule(loop.time()))

        def heard() -> None:  # a server visibly working is given the limit again
            if flight.garbled is None:  # unless its answer came, unreadable
                deadline.reschedule(loop.time() + limit)

        progress, latest = self.features.progress_for(ctx.progress, heard)
        try:
            # The limit is ours, not the SDK's, so progress can move it (the protocol
            # allows that); when it passes, the call's task is cancelled, and the SDK sends
            # notifications/cancelled so the server can stop too.
            async with deadline:
                with self.cancelled.watch(), self.flights.flying(flight):
                    result = await session.call_tool(
                        tool.remote_name, args, progress_callback=progress
                    )
        except Exception as error:  # a closed connection shows as MCPError or a stream error
            if is_wrong_shape(error):  # its answer came, of a shape MCP does not have
                said = wrong_shape(answer_name(error), error)
                raise ToolFailure(f"{tool.name}: {said}") from None
            if (said := against_output_schema(error)) is not None:
                raise ToolFailure(f"{tool.name}: {said}") from None
            timed_out = isinstance(error, TimeoutError) and deadline.expired()
            if timed_out and flight.garbled is not None:  # ended by its unreadable answer
                raise ToolFailure(
                    f"{tool.name}: its answer is not MCP's JSON-RPC ({flight.garbled}), so "
                    "the call was cancelled"
                ) from None
            if timed_out or (isinstance(error, MCPError) and error.code == REQUEST_TIMEOUT):
                raise ToolFailure(
                    f"{tool.name}: no answer within {limit:g} s, so the call was cancelled "
                    f"(raise {setting} if it needs longer)",
                    kind="timeout",
                ) from None
            if self._oauth is not None and self._oauth.needs_login:
                from agentcli.mcp.oauth import login_needed_message

                message = login_needed_message(self.config.name)
                raise ToolFailure(
                    f"{tool.name}: MCP server {self.config.name}: {message}"
                ) from None
            closed = connection_closed(error)
            if not closed and self._session is session and self._alive():
                if isinstance(error, MCPError):
                    message = f"{tool.name}: the server answered: {error}"
                    said = [message, *notes.unsaid(message)]
                    if hint := self._sandbox_hint(message, args):
                        said.append(f"({hint})")
                    raise ToolFailure(" ".join(said)) from None
                raise
            await self._lost(session)
            what = f"stopped during the call ({error or type(error).__name__})"
            raise ToolFailure(self._lost_message(what)) from None
        finally:
            latest.flush()  # its latest progress, before its result
            self.features.call_ended()
        parts = capped(result_parts(result), ctx)  # a 10 MB result does not fill the context
        parts += map(TextPart, notes.unsaid(render_text(parts)))
        if result.is_error and (hint := self._sandbox_hint(render_text(parts), args)):
            parts.append(TextPart(hint))
        return ToolOutput.of_parts(parts, error=bool(result.is_error))

    def _sandbox_hint(self, text: str, args: dict[str, Any]) -> str:
        """A failed call the sandbox explains: one line naming the setting, for the model
        (in the result) and for the person (a warning, said once)."""
        from agentcli.mcp.reach import call_hint

        cwd = self.config.working_directory(self.workspace)
        hint = call_hint(self.config, self.reach, text, args, cwd)
        if not hint:
            return ""
        self.problems.append(hint)
        return f"agentcli: {hint}"

    async def close(self) -> None:
        gently = await self.cancelled.flush(self._session)
        tree = self._tree()  # before the kill: a descendant that left the group is in it
        if not gently:  # a quick end, rather than the SDK's wait on stdin
            _signal_all(tree, signal.SIGTERM)
        await self._end_task()
        deadline = asyncio.get_running_loop().time() + STOP_GRACE
        while _living(tree) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        _signal_all(_living(tree), signal.SIGKILL)
        if self.state == "running":
            self.state = "stopped"

    # --- what `mcp list` shows besides the tools

    async def resources(self) -> list[dict[str, Any]]:
        if self._session is None or not getattr(self.capabilities, "resources", None):
            return []
        listed = await self._session.list_resources()
        return [
            {"uri": str(r.uri), "name": r.name, "mimeType": r.mime_type} for r in listed.resources
        ]

    async def prompt_text(self, name: str, arguments: dict[str, str]) -> str:
        """An MCP prompt rendered as the text of one user message."""
        session = await self.live_session()
        result = await session.get_prompt(name, arguments)
        return "\n\n".join(
            render_text(content_parts([message.content])) for message in result.messages
        )

    # --- connecting

    async def _connect(self) -> None:
        from mcp import MCPError

        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._stop = asyncio.Event()
        self._garbage, self._garbled = None, asyncio.Event()
        self._task = asyncio.create_task(self._serve(ready), name=self.name)
        deadline = loop.time() + self.config.start_timeout
        garbled = asyncio.ensure_future(self._garbled.wait())
        try:
            await asyncio.wait(
                {ready, garbled},
                timeout=self.config.start_timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
            if not ready.done() and garbled.done():
                await self._forgive_banner(ready, deadline)
        finally:
            garbled.cancel()
        if not ready.done():
            await self._end_task()
            if ready.done() and not ready.cancelled():
                ready.exception()  # retrieved: asyncio would print it with a traceback
            if self._garbage is not None:
                raise NotMcp(
                    f"it wrote something that is not MCP on stdout ({self._garbage}); is "
                    f"{self.config.command} an MCP server that speaks stdio?"
                )
            raise StartFailed(
                f"no answer within {self.config.start_timeout:g} s (raise "
                f"mcp.servers.{self.config.name}.start_timeout if it needs longer)"
            )
        try:
            ready.result()
        except Exception as error:
            await self._end_task()
            inner = innermost_error(error)
            if is_wrong_shape(inner):  # the same in every sandbox profile: no hint
                raise NotMcp(wrong_shape(answer_name(inner), inner)) from None
            if isinstance(inner, EndlessPages):  # the same in every profile: no hint
                raise NotMcp(str(inner)) from None
            if isinstance(inner, MCPError) and not connection_closed(inner):
                raise StartRefused(self._explain(inner)) from None
            raise StartFailed(self._explain(inner)) from None

    async def _forgive_banner(self, ready: asyncio.Future[None], deadline: float) -> None:
        """Not JSON-RPC on stdout: a banner printed before the protocol starts is forgiven
        while the server is visibly working (its processes use CPU: a slow import on a
        loaded machine), up to the start timeout; a program that is no MCP server, idle
        after its line for GARBAGE_GRACE, fails then, not at the start timeout."""
        loop = asyncio.get_running_loop()
        used = self._cpu_seconds()
        while not ready.done() and loop.time() < deadline:
            await asyncio.wait({ready}, timeout=min(GARBAGE_GRACE, deadline - loop.time()))
            now = self._cpu_seconds()
            if now - used < BUSY_CPU:
                return
            used = now

    def _cpu_seconds(self) -> float:
        total = 0.0
        for process in self._tree():
            with contextlib.suppress(psutil.Error):
                times = process.cpu_times()
                total += times.user + times.system
        return total

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        from mcp import ClientSession

        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await self._open_transport(stack)
                options = self.features.session_options()
                session = ClientSession(read, write, message_handler=self._on_message, **options)
                await stack.enter_async_context(session)
                initialized = await session.initialize()
                await self.features.initialized(session, initialized)
                self.capabilities = initialized.capabilities
                info = initialized.server_info
                self.server_info = f"{info.name} {info.version}" if info else ""
                self._set_tools(await self._list_tools(session))
                if getattr(self.capabilities, "prompts", None):
                    with contextlib.suppress(Exception):  # prompts are a nicety
                        self.prompts = list((await session.list_prompts()).prompts)
                self._session, self.state = session, "running"
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(
                    error if isinstance(error, Exception) else StartFailed("stopped")
                )
                ready.exception()  # marked read: a start cut by --timeout is no traceback
            if not isinstance(error, Exception):
                raise
        finally:
            self._session = None
            self.features.closed()
            self._release_guard()

    async def _open_transport(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        config = self.config
        if config.url:
            return await self._open_http(stack)
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        from agentcli.adapters import mcp_stdio_lines as lines

        lines.install()  # a long line is read in linear time (agentcli.adapters.mcp_stdio_lines)

        try:
            self._log_path.parent.mkdir(parents=True, exist_ok=True)
            log = stack.enter_context(self._log_path.open("a", encoding="utf-8"))
            self._log_start = log.tell()  # where this start's stderr begins
        except OSError:  # a full or read-only data directory: the server runs, unlogged
            log = stack.enter_context(open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
        argv = [config.command or "", *config.args]
        env, cwd = config.environment(), config.working_directory(self.workspace)
        self.reach = None
        if self.confined and self.profile is not None:
            argv, env = self._in_sandbox(argv, env, cwd)
        params = StdioServerParameters(
            command=argv[0],
            args=argv[1:],
            env=env,
            cwd=cwd,
            encoding_error_handler="replace",  # stdout is text: a bad byte is U+FFFD
        )
        async with self._spawn_lock:
            before = {p.pid for p in psutil.Process().children()}
            streams = await stack.enter_async_context(stdio_client(params, errlog=log))
            new = [p.pid for p in psutil.Process().children() if p.pid not in before]
        self._pid = new[0] if new else None
        return streams

    def _in_sandbox(
        self, argv: list[str], env: dict[str, str], cwd: str
    ) -> tuple[list[str], dict[str, str]]:
        from agentcli.sandbox.boundary import PlaceError, parse_place
        from agentcli.sandbox.profiles import Profile

        try:
            places = [parse_place(text) for text in self.config.dirs]
        except PlaceError as error:
            raise StartFailed(f"mcp.servers.{self.config.name}.dirs: {error}") from None
        # What the SDK passes every server (PATH, HOME, ...), so the sandbox sees it too.
        from mcp.client.stdio import get_default_environment

        env = {**get_default_environment(), **env}
        gap = self.sandbox.protection_gap(self.profile)
        if gap is not None:  # fail closed: what it could change could not be kept
            raise StartFailed(
                f"{gap.what}: a server in the {self.profile} sandbox could change what git or "
                f'agentcli runs for good; give it sandbox = "read-only", or {gap.remedy}'
            )
        try:
            confined = self.sandbox.confine_server(
                argv, Profile(self.profile), cwd=cwd, env=env, places=places
            )
        except ValueError as error:  # a read-write place over the workspace, read-only
            raise StartFailed(f"mcp.servers.{self.config.name}.dirs: {error}") from None
        self._guard = confined.guard
        if confined.layout is not None:
            from agentcli.mcp.reach import Reach

            self.reach = Reach.of(self.profile, confined.layout, env.get("HOME", ""))
        return confined.argv, confined.env

    def _release_guard(self) -> None:
        """The server is gone: what it changed of the protected paths is put back."""
        guard, self._guard = self._guard, None
        if guard is not None:
            guard.end()

    async def _open_http(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        """Streamable HTTP or legacy SSE (agentcli.mcp.transports), with OAuth unless the
        configuration gives the Authorization header (agentcli.mcp.oauth)."""
        from agentcli.errors import ConfigError
        from agentcli.mcp import transports
        from agentcli.mcp.oauth import session_auth

        try:
            headers = self.config.resolved_headers()
        except ConfigError as error:
            raise StartFailed(str(error)) from None
        self._answers = transports.HttpAnswers(self.config.url or "")
        self._oauth = session_auth(self.config)  # anew: a login elsewhere may have stored tokens
        self.http_transport = self.http_transport or transports.chosen_transport(self.config)
        return await transports.open_http(
            stack, self.config, self.http_transport, headers, self._answers, self._oauth
        )

    async def _list_tools(self, session: Any) -> list[Any]:
        from mcp.types import PaginatedRequestParams

        listed, cursor, seen = [], None, set()
        for _ in range(MAX_TOOL_PAGES):
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return listed
            if cursor in seen:
                raise EndlessPages(
                    f"its tools/list pages do not end (cursor {cursor[:40]!r} again)"
                )
            seen.add(cursor)
        raise EndlessPages(f"its tools/list pages do not end (more than {MAX_TOOL_PAGES})")

    def _set_tools(self, listed: list[Any]) -> None:
        # Tools that say they reach the open world: `mcp add` and `mcp list` suggest the
        # network for them (a suggestion: the user chooses, agentcli.mcp.reach).
        self.open_world = [
            item.name
            for item in listed
            if getattr(getattr(item, "annotations", None), "open_world_hint", None) is True
        ]
        tools = []
        for item in listed:
            try:
                tools.append(make_tool(self.config, item, self))
            except DynamicToolError as problem:
                self.problems.append(f"MCP server {self.config.name}: {problem}; skipped")
        self._tools = tools

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):  # a line on stdout that is not JSON-RPC
            quoted = _quoted_line(message)
            if self._garbage is None:
                self._garbage = quoted
                self._garbled.set()
            self.flights.unreadable(message, quoted)
            return
        method = getattr(message, "method", "")
        if method == "notifications/tools/list_changed":
            self.changed = True  # listed again before the next model step
        self.catalog.notice(message)

    # --- a server that died

    def _alive(self) -> bool:
        if self.config.url:
            return self._session is not None
        try:
            process = psutil.Process(self._pid) if self._pid else None
        except psutil.NoSuchProcess:
            return False
        return process is not None and process.status() != psutil.STATUS_ZOMBIE

    @property
    def session(self) -> Any:
        """The SDK's ClientSession while the server runs; None before it started and after
        it stopped (what asks for no restart: a listing, a subscription)."""
        return self._session

    async def live_session(self) -> Any:
        """The session, the server started again once if it died (what a call needs)."""
        async with self._reconnect:
            if self._session is not None and self._alive():
                return self._session
            if self._session is not None:
                await self._lost(self._session)
            if self._restarted:
                raise ToolFailure(self._lost_message("stopped"))
            self._restarted = True
            try:
                await self._connect()
            except StartFailed as failure:
                self.state, self.error = "failed", str(failure)
                raise ToolFailure(
                    f"MCP server {self.config.name} stopped and could not be restarted: {failure}"
                ) from None
            return self._session

    async def _lost(self, session: Any) -> None:
        if self._session is session or self._session is None:
            self.state, self.error = "exited", "the server stopped"
            await self._end_task()

    def _lost_message(self, what: str) -> str:
        then = (
            "it was restarted once already, so it stays down for this session"
            if self._restarted
            else "it will be restarted at the next call"
        )
        return f"MCP server {self.config.name} {what}; {then}"

    async def _end_task(self) -> None:
        task, self._task = self._task, None
        self._stop.set()
        if task is None:
            return
        # A running session ends when told to (the SDK closes its side); one still
        # starting is waiting on the server: cancel it at once.
        timeout = 10 if self._session is not None else 0
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=timeout)
        except (TimeoutError, Exception):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    def _tree(self) -> list[psutil.Process]:
        if self._pid is None:
            return []
        try:
            root = psutil.Process(self._pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def _explain(self, error: BaseException) -> str:
        if self.config.url:
            from agentcli.mcp.oauth import explain_auth
            from agentcli.mcp.transports import explain_http

            said = explain_auth(self.config, self._oauth, self._answers, error)
            if said := said or explain_http(self.config, self._answers):
                return said
        if self.config.url and "Connect" in type(error).__name__:
            return f"cannot reach {self.config.url}: {error}"
        if isinstance(error, FileNotFoundError | PermissionError | IsADirectoryError):
            return program_problem(self.config.command or "")
        if isinstance(error, OSError) and self.config.url:  # no program: a file of agentcli's
            from agentcli.output.visible import visible

            path = error.filename2 or error.filename
            where = f"{visible(str(path))}: " if path else ""
            return (
                f"cannot use {where}{error.strerror or error} (remove it; `agentcli mcp "
                f"login {self.config.name}` writes a new one)"
            )
        if isinstance(error, OSError):
            return f"could not run {self.config.command}: {error.strerror or error}"
        text = f"{type(error).__name__}: {error}" if not str(error) else str(error)
        tail = self._log_tail()
        return f"{text} (its stderr: {tail})" if tail else text

    def _log_lines(self, count: int = 20) -> str:
        """The last lines of its stderr, where what the sandbox refused it is usually said."""
        try:
            with self._log_path.open("rb") as log:
                log.seek(max(self._log_start, log.seek(0, os.SEEK_END) - 16_384))
                text = log.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-count:])

    def _log_tail(self) -> str:
        if self.config.url:
            return ""
        try:
            text = self._log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return lines[-1][-LOG_TAIL:] if lines else ""


def _quoted_line(error: Exception) -> str:
    """The start of the line the SDK could not parse, quoted and safe to show."""
    from agentcli.output.visible import visible
    from agentcli.text.decoding import shown

    errors = getattr(error, "errors", None)
    inputs = [item.get("input") for item in errors()] if callable(errors) else []
    # The message itself where an error holds it (a missing member's error does), not
    # the piece of it another error is about (a list `id`, say).
    found = next((i for i in inputs if isinstance(i, dict)), inputs[0] if inputs else None)
    if isinstance(found, dict | list):  # JSON, but not JSON-RPC: the message itself
        found = json.dumps(found, ensure_ascii=False)
    text = visible(shown(found.strip())) if isinstance(found, str) else ""
    if not text:
        return f"{type(error).__name__}: {str(error)[:80]}"
    return repr(text if len(text) <= 80 else text[:79] + "…")


def _living(processes: list[psutil.Process]) -> list[psutil.Process]:
    alive = []
    for process in processes:
        with contextlib.suppress(psutil.Error):
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
    return alive


def _signal_all(processes: list[psutil.Process], sig: int) -> None:
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.send_signal(sig)
