"""What agentcli offers an MCP server besides calling its tools: the client capabilities the
SDK's ClientSession declares when it is given a callback — roots, sampling, elicitation and
logging — plus progress on calls, the server's instructions, and agentcli's own name.

- **roots**: the workspace and the places added with `--add-dir` (`sandbox.add_dirs`), as
  `file://` URIs; `notifications/roots/list_changed` when a session binds other places.
- **elicitation**: the server's form, asked in the terminal by the person there (the
  approver's `elicit`), as ask_user's questions are, `--yes` or not. Declined under
  `--deny`, and with nobody to ask — unless `--yes` and the schema's defaults answer every
  required field: then those are sent (`--yes` approves; it never invents an answer).
- **sampling**: one step of the session's own model, no tools, after the person approves
  (the approver's `approve_sampling`). Rules decide first: `mcp_sampling(SERVER)` in
  allow, ask or deny lists; with no rule and no person (`--yes` approves tool calls only),
  or under `--deny`, it is declined.
- **logging**: `logging/setLevel` at the server's `log_level`; messages at or above it are
  `mcp_log` events (notices on stderr, lines in the REPL, records in the session), a few
  a second at most, with one line counting those dropped (agentcli.mcp.floods).
- **progress**: a progress token on every call; notifications are `progress` events, the
  latest of each call a few times a second at most; each one moves the call's deadline.

Every request declined or answered is an `mcp_request` event, and a declined one is said
in the result of the call it came during."""

from __future__ import annotations

import contextlib
import warnings
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agentcli.conversation import events as ev
from agentcli.mcp.config import LOG_LEVELS, ServerConfig
from agentcli.mcp.floods import LOG_BURST, LOG_RATE, LatestValue, LogLimit
from agentcli.records import dataclass, field

SAMPLING_RULE = "mcp_sampling"  # the rule subject: mcp_sampling(SERVER)
MAX_INSTRUCTIONS = 4000  # characters of one server's instructions in the system prompt
MAX_LOG = 500  # characters of one log message shown


@dataclass(frozen=True, slots=True)
class FormRequest:
    """An elicitation, as the person is asked it (agentcli.mcp.forms.Field for each field);
    `url`: a URL-mode request, which has no fields."""

    server: str
    message: str
    fields: list[Any] = field(default_factory=list)
    url: str | None = None


@dataclass(frozen=True, slots=True)
class FormAnswer:
    action: str  # accept | decline | cancel
    content: dict[str, Any] | None = None
    reason: str = ""  # declined by agentcli: why, as the model is told


class CallNotes:
    """What one call's result must say besides the server's answer."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def unsaid(self, said: str) -> list[str]:
        """The notes `said` (the result's text so far) does not already say."""
        return [note for note in self.notes if note.strip("[]") not in said]


@dataclass(frozen=True, slots=True)
class SamplingRequest:
    """A sampling request, as the person is asked to approve it."""

    server: str
    system: str
    messages: list[tuple[str, str]]  # (role, text)
    max_tokens: int
    model: str


@dataclass(slots=True)
class ClientHost:
    """What a session lends its MCP servers. The agent binds it when it is made (the REPL
    makes one per /clear or /resume, and keeps the servers)."""

    roots: tuple[str, ...] = ()  # absolute directories
    emit: Callable[[ev.Event], None] | None = None
    person: Any = None  # the approver, when someone can answer (its elicit, approve_sampling)
    policy: Any = None  # agentcli.policy.engine.Policy: its rules and flags
    provider: Callable[[], Any] | None = None  # the session's provider as it is now
    in_turn: Callable[[], bool] = lambda: True  # a turn runs: the person may be asked now
    servers: list[ServerFeatures] = field(default_factory=list)

    def bind(
        self,
        *,
        emit: Callable[[ev.Event], None],
        person: Any,
        policy: Any,
        provider: Callable[[], Any],
        roots: tuple[str, ...],
        in_turn: Callable[[], bool] = lambda: True,
    ) -> None:
        self.emit, self.person, self.policy, self.provider = emit, person, policy, provider
        self.in_turn = in_turn
        self.set_roots(roots)

    def set_roots(self, roots: tuple[str, ...]) -> list[Any]:
        """New roots: each running server is told (`notifications/roots/list_changed`) and
        lists them again when it likes; the tasks that tell them, to wait for."""
        if roots == self.roots:
            return []
        self.roots = roots
        return [task for server in self.servers if (task := server.roots_changed()) is not None]

    def say(self, event: ev.Event) -> None:
        if self.emit is not None:
            self.emit(event)

    def asker(self, method: str) -> Any:
        """The person's `method`, when someone can be asked now. Between turns nobody is:
        the REPL's prompt owns the terminal, and a question there would answer nothing."""
        return getattr(self.person, method, None) if self.in_turn() else None


def roots_of(workspace: Path, sandbox: Any) -> tuple[str, ...]:
    """The workspace, then the places a person added (`--add-dir`, `sandbox.add_dirs`)."""
    places = getattr(getattr(sandbox, "settings", None), "places", ()) or ()
    return tuple(dict.fromkeys([str(workspace), *(place.path for place in places)]))


def _hosts(sources: list[Any]) -> list[ClientHost]:
    hosts = {id(s.features.host): s.features.host for s in sources if hasattr(s, "features")}
    return list(hosts.values())


def bind_session(sources: list[Any], **lent: Any) -> None:
    """An agent lends its MCP servers what they ask of a session (see ClientHost.bind)."""
    for host in _hosts(sources):
        host.bind(**lent)


async def tell_roots(sources: list[Any], roots: tuple[str, ...]) -> int:
    """The session's places changed (/add-dir): its running servers are told, and this
    returns once each was (or could not be: a server gone asks again at its restart).
    How many were told."""
    import asyncio

    tasks = [task for host in _hosts(sources) for task in host.set_roots(roots)]
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)
    return len(tasks)


def instructions_section(sources: list[Any]) -> str:
    """The system prompt's part for the instructions of trusted, running servers."""
    blocks = []
    for source in sources:
        features = getattr(source, "features", None)
        if features is None or not features.config.trusted or not features.instructions:
            continue
        text = features.instructions.strip()
        if len(text) > MAX_INSTRUCTIONS:
            text = text[:MAX_INSTRUCTIONS] + " […]"
        blocks.append(
            f"### MCP server {features.config.name} (its tools are mcp__{features.config.name}"
            f"__*)\n{text}"
        )
    if not blocks:
        return ""
    return "## Instructions from MCP servers the user trusts\n\n" + "\n\n".join(blocks)


class ServerFeatures:
    """One server's side of the client capabilities: the SDK callbacks and what they keep."""

    def __init__(self, config: ServerConfig, host: ClientHost) -> None:
        self.config = config
        self.host = host
        host.servers.append(self)
        self.instructions = ""
        # The calls running now, each with what its result must say (requests declined
        # while it ran: the wire does not say which call a request came from, so each
        # running call is told). Weak: a call that ended, however, drops out.
        self._calls: weakref.WeakSet[CallNotes] = weakref.WeakSet()
        self._session: Any = None
        self._logs = LogLimit(self.host.say, self._dropped_logs)

    # --- the session

    def session_options(self) -> dict[str, Any]:
        """ClientSession's keyword arguments: a callback each (the SDK declares the
        capability for each one given) and agentcli's name and version."""
        from mcp_types import Implementation

        from agentcli import __version__

        options: dict[str, Any] = {
            "client_info": Implementation(name="agentcli", version=__version__),
            "list_roots_callback": self.list_roots,
            "sampling_callback": self.sample,
            "elicitation_callback": self.elicit,
            "logging_callback": self.log,
        }
        if self.config.log_level != "off":
            options["log_level"] = self.config.log_level  # the 2026 protocol's, per request
        return options

    async def initialized(self, session: Any, result: Any) -> None:
        """After the handshake: keep the instructions; ask for logs at the chosen level."""
        self._session = session
        self.instructions = (getattr(result, "instructions", None) or "").strip()
        if self.config.log_level == "off" or not getattr(result.capabilities, "logging", None):
            return
        with _spoken_still(), contextlib.suppress(Exception):
            await session.set_logging_level(self.config.log_level)

    def closed(self) -> None:
        self._session = None
        self._logs.flush()  # what was dropped is said before the server is gone

    def call_ended(self) -> None:
        """A call ended: the log messages dropped during it are counted now."""
        self._logs.flush()

    def roots_changed(self) -> Any:
        """Tells the server its roots changed; the task that does, or None (not running)."""
        session = self._session
        if session is None:
            return None
        import asyncio

        async def notify() -> None:
            with _spoken_still(), contextlib.suppress(Exception):  # gone: asks at restart
                await session.send_roots_list_changed()

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop running: nothing to tell
            return None
        task = loop.create_task(notify())
        _telling.add(task)  # a task nobody holds may vanish before it ran
        task.add_done_callback(_telling.discard)
        return task

    def call_notes(self) -> CallNotes:
        """For a call about to start: what its result must add, filled while it runs."""
        notes = CallNotes()
        self._calls.add(notes)
        return notes

    def _note(self, text: str) -> None:
        for call in list(self._calls):
            call.notes.append(text)

    # --- roots

    async def list_roots(self, context: Any) -> Any:
        from mcp_types import ListRootsResult, Root

        roots = [
            Root(uri=Path(path).as_uri(), name=Path(path).name or path) for path in self.host.roots
        ]
        return ListRootsResult(roots=roots)

    # --- logging

    async def log(self, params: Any) -> None:
        level = str(params.level)
        if self.config.log_level == "off" or _rank(level) < _rank(self.config.log_level):
            return  # a server that sends more than it was asked for
        data = params.data
        text = data if isinstance(data, str) else _json(data)
        if len(text) > MAX_LOG:
            text = text[:MAX_LOG] + "…"
        logger = str(params.logger) if params.logger else None
        self._logs.offer(
            ev.McpLog(server=self.config.name, level=level, message=text, logger=logger)
        )

    def _dropped_logs(self, count: int) -> ev.McpLog:
        name = self.config.name
        said = f"{LOG_BURST} at once, then {LOG_RATE:g} a second"
        message = f"… {count:,} more log messages from {name} dropped (at most {said})"
        return ev.McpLog(server=name, level="warning", message=message)

    # --- progress

    def progress_for(
        self, report: Callable[[dict[str, Any]], None], heard: Callable[[], None]
    ) -> tuple[Any, LatestValue]:
        """The SDK's progress callback for one call, and what keeps its latest value:
        `heard` at every notification (the call's deadline moves), a `progress` event on
        its line a few times a second at most (flush the LatestValue when the call ends)."""
        latest = LatestValue(report)

        async def progress(done: float, total: float | None, message: str | None) -> None:
            heard()
            latest.offer(progress_value(done, total, message))

        return progress, latest

    # --- elicitation

    async def elicit(self, context: Any, params: Any) -> Any:
        from mcp_types import ElicitResult

        answer = await self._elicitation(params)
        return ElicitResult(action=answer.action, content=answer.content)

    async def _elicitation(self, params: Any) -> FormAnswer:
        from agentcli.mcp.forms import FormError, defaults_only, fields_of

        server, policy = self.config.name, self.host.policy
        url = getattr(params, "url", None)
        try:
            fields = [] if url else fields_of(getattr(params, "requested_schema", None))
        except FormError as error:
            return self._declined("elicitation", "auto", f"its form cannot be asked: {error}")
        if policy is not None and policy.deny:
            return self._declined("elicitation", "flag", "--deny declines servers' questions")
        elicit = self.host.asker("elicit")
        if elicit is None and policy is not None and policy.yes:
            defaults = None if url else defaults_only(fields)
            if defaults is None:
                return self._declined(
                    "elicitation",
                    "flag",
                    f"{self._nobody()}, and --yes approves tool calls but cannot answer a "
                    "server's questions",
                )
            self._record("elicitation", "accept", "flag", "--yes sent the form's defaults")
            return FormAnswer("accept", defaults)
        if elicit is None:
            return self._declined("elicitation", "auto", self._nobody())
        message = str(getattr(params, "message", "") or "")
        answer: FormAnswer = await elicit(FormRequest(server, message, fields, url))
        self._record("elicitation", answer.action, "user", None)
        if answer.action != "accept":
            verb = "declined" if answer.action == "decline" else "cancelled"
            self._note(f"[agentcli: the user {verb} MCP server {server}'s request for input]")
        return answer

    # --- sampling

    async def sample(self, context: Any, params: Any) -> Any:
        from mcp_types import CreateMessageResult, ErrorData, TextContent

        refusal, by, rule = await self._sampling_decision(params)
        if refusal is not None:
            return ErrorData(code=-1, message=refusal)
        provider = self.host.provider() if self.host.provider is not None else None
        try:
            text, usage = await run_sampling(provider, params)
        except Exception as error:  # a provider failure: the server hears it, the run goes on
            reason = f"the model failed: {error}"
            self._note(f"[agentcli: MCP server {self.config.name}'s sampling request: {reason}]")
            self._record("sampling", "error", by, reason, rule)
            return ErrorData(code=-1, message=reason)
        self._record("sampling", "accept", by, None, rule, usage)
        model = getattr(provider, "model", "") or ""
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text=text),
            model=str(model),
            stop_reason="endTurn",
        )

    async def _sampling_decision(self, params: Any) -> tuple[str | None, str, str | None]:
        """(why it is declined, said to the server and in the result, or None: approved;
        who decided; the rule that did)."""
        from agentcli.risk import ApprovalRequest, Assessment, Risk, Subjects

        server, policy = self.config.name, self.host.policy
        if self.host.provider is None:
            return self._refusal("auto", "no model in this session"), "auto", None
        if policy is not None:
            request = ApprovalRequest(
                SAMPLING_RULE,
                {"server": server},
                Assessment(Risk.HIGH, f"MCP server {server} asks to use the model"),
                subjects=Subjects(kind="text", values=(server,)),
            )
            verdict = policy.verdict(request)
            if verdict.decision == "deny":
                why = f"the rule {verdict.rule} declines it"
                return self._refusal("rule", why, verdict.rule), "rule", verdict.rule
            if verdict.decision == "allow":
                return None, "rule", verdict.rule
            if policy.deny:
                return self._refusal("flag", "--deny declines it"), "flag", None
        approve = self.host.asker("approve_sampling")
        if approve is None:
            by = "flag" if policy is not None and policy.yes else "auto"
            yes = ", and --yes approves tool calls, not sampling" if by == "flag" else ""
            why = f"{self._nobody()}{yes}; allow it with --allow '{SAMPLING_RULE}({server})'"
            return self._refusal(by, why), by, None
        shown = sampling_request(server, params, self.host.provider())
        choice = await approve(shown)  # "once" | "session" | "deny"
        if choice == "deny":
            return self._refusal("user", "the user declined it"), "user", None
        if choice == "session" and policy is not None:
            from agentcli.policy.rules import parse_rule

            policy.session_allow.append(parse_rule(f"{SAMPLING_RULE}({server})", "session"))
        return None, "user", None

    def _refusal(self, by: str, reason: str, rule: str | None = None) -> str:
        return self._declined("sampling", by, reason, rule).reason  # as the model hears it

    # --- what became of a request

    def _nobody(self) -> str:
        if self.host.person is not None and not self.host.in_turn():
            return "it came between turns, when agentcli asks nobody"
        return "no terminal to ask the user"

    def _declined(self, kind: str, by: str, reason: str, rule: str | None = None) -> FormAnswer:
        self._record(kind, "decline", by, reason, rule)
        what = "request for input" if kind == "elicitation" else "request to use the model"
        said = f"agentcli declined MCP server {self.config.name}'s {what}: {reason}"
        self._note(f"[{said}]")
        return FormAnswer("decline", reason=said)

    def _record(
        self,
        kind: str,
        outcome: str,
        by: str,
        reason: str | None,
        rule: str | None = None,
        usage: ev.Usage | None = None,
    ) -> None:
        tokens = usage.to_wire() if usage is not None else None  # sampling: the model's spend
        request = ev.McpRequest(
            server=self.config.name,
            kind=kind,
            outcome=outcome,
            by=by,
            reason=reason,
            rule=rule,
            usage=tokens,
        )
        self.host.say(request)


_telling: set[Any] = set()  # roots_changed notifications on their way


@contextlib.contextmanager
def _spoken_still() -> Iterator[None]:
    """The SDK marks logging and roots deprecated in the 2026 protocol; the handshake
    versions most servers speak still have them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def progress_value(done: float, total: float | None, message: str | None) -> dict[str, Any]:
    """A progress notification as the `progress` event's value, with the line shown."""
    count = f"{done:g}/{total:g}" if total else f"{done:g}"
    if total:
        count += f" ({100 * done / total:.0f}%)"
    line = f"{message} · {count}" if message else count
    value: dict[str, Any] = {"lines": [line], "progress": done}
    if total is not None:
        value["total"] = total
    if message:
        value["message"] = message
    return value


def _rank(level: str) -> int:
    return LOG_LEVELS.index(level) if level in LOG_LEVELS else len(LOG_LEVELS)


def _json(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _text_of(content: Any) -> str:
    """A sampling message's content (one block or a list) as text; what is not text is
    named, not sent."""
    blocks = content if isinstance(content, list) else [content]
    pieces = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            pieces.append(block.text)
        else:
            pieces.append(f"[{kind or 'unknown'} content]")
    return "\n".join(pieces)


def sampling_request(server: str, params: Any, provider: Any) -> SamplingRequest:
    messages = [(str(m.role), _text_of(m.content)) for m in params.messages]
    model = f"{getattr(provider, 'name', '')}:{getattr(provider, 'model', '')}".strip(":")
    return SamplingRequest(server, params.system_prompt or "", messages, params.max_tokens, model)


async def run_sampling(provider: Any, params: Any) -> tuple[str, ev.Usage]:
    """One step of the session's model on the server's messages, without tools: its text
    and the tokens it took."""
    from agentcli.conversation.messages import Message
    from agentcli.providers.base import ModelRequest, events_in

    messages = [
        Message(role="assistant" if m.role == "assistant" else "user", content=_text_of(m.content))
        for m in params.messages
    ]
    request = ModelRequest(
        system=params.system_prompt or "", messages=messages, max_tokens=params.max_tokens
    )
    pieces: list[str] = []
    usage = ev.Usage()
    async with contextlib.aclosing(provider.stream(request)) as stream:
        async for item in stream:  # an event, a list of them, or the StepEnd
            for event in events_in(item):
                if isinstance(event, ev.TextMessageContent):
                    pieces.append(event.delta)
                elif isinstance(event, ev.StepEnd) and event.usage is not None:
                    usage.add(event.usage)
    return "".join(pieces).strip(), usage
