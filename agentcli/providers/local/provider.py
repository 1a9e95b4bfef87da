"""`--model local`: a small model running in-process, behind the same event stream as the
HTTP providers.

One step: if a tool call is allowed now, the model first writes a grammar-constrained
JSON decision (a call whose arguments match the tool's JSON Schema, or "answer"); a call
becomes TOOL_CALL_START/ARGS/END once complete; "answer" (and every step after a tool
result) is free text streamed token by token. Inference runs in a worker thread so the
event loop stays responsive, and every generation is bounded in tokens and seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from agentcli.conversation import events as ev
from agentcli.conversation.messages import Message, new_id
from agentcli.errors import ProviderError
from agentcli.providers.base import ModelRequest
from agentcli.providers.local.conversation import (
    calls_since_user,
    canonical_arguments,
    last_user_request,
    tool_rounds_since_user,
    with_request,
)
from agentcli.providers.local.decision import ANSWER, Decision, decision_prefix, parse_decision
from agentcli.providers.local.engine import Engine, Generation, default_threads, get_engine
from agentcli.providers.local.fit import argument_fit
from agentcli.providers.local.grammar import arguments_grammar, decision_grammar
from agentcli.providers.local.models import (
    default_model,
    known_model,
    local_available,
    resolve_model_file,
)
from agentcli.providers.local.overwrite import spared_choice, spared_decision
from agentcli.providers.local.prompts import (
    ANSWER_SYSTEM,
    PLAIN_STOP,
    Turn,
    answer_turns,
    argument_turns,
    decision_system_prompt,
    decision_turns,
    plain_answer_prompt,
    plain_decision_prompt,
)
from agentcli.providers.local.results import clip, report_results
from agentcli.providers.local.router import (
    Example,
    offered_tools,
    own_examples,
    select_examples,
    tool_prior,
)
from agentcli.providers.local.scoring import (
    CONTENT_FREE,
    ChoiceScores,
    ChoiceWeights,
    choose,
    combine_scores,
    intent_prompt,
)
from agentcli.records import dataclass, field, fields

# The scored choice's weights, chosen on the example bank (bench/local_model.py
# --calibrate, leave-one-out), not on the benchmark's prompts.
_WEIGHTS = ChoiceWeights()


@dataclass(slots=True)
class LocalOptions:
    """The knobs of `[providers.local]` (all optional)."""

    n_ctx: int = 4096
    n_threads: int = field(default_factory=default_threads)
    max_tokens: int = 256  # per free-text answer
    call_tokens: int = 160  # per tool-call decision
    max_seconds: float = 60.0  # wall clock per generation
    call_seconds: float = 30.0
    tools: str | list[str] = "core"  # core | all | a list of tool names
    arguments: str = "all"  # all | required: the properties a call may set
    few_shot: bool = True
    tool_rounds: int = 1  # tool calls per user turn before the model must answer
    choice: str = "scored"  # scored | greedy: how the tool (or answering) is chosen
    copy_arguments: bool = True  # a path, URL, command... only as written in the request
    # shared: the arguments are written after the decision's own prompt (already evaluated)
    # | own: after a prompt of the tool's own examples (one more prompt to evaluate)
    argument_prompt: str = "shared"
    calibration: float = _WEIGHTS.calibration
    channel_weight: float = _WEIGHTS.channel_weight
    prior_weight: float = _WEIGHTS.prior_weight
    answer_bias: float = _WEIGHTS.answer_bias
    fit_weight: float = _WEIGHTS.fit_weight
    # a copied argument limited to what the request spells out for its kind (a URL, an
    # expression, a file's text...) when it spells any out, else to the request's spans
    spelled_arguments: bool = True
    prompt_style: str = "auto"  # auto | chat | plain
    answer_model: str = "auto"  # auto | same | a model name: who writes free-text answers
    after_tool: str = "auto"  # auto | template | model: the answer after a tool result
    result_chars: int = 6000  # a tool result's characters shown to the model
    repeat_penalty: float = 1.15  # free text only

    def weights(self) -> ChoiceWeights:
        return ChoiceWeights(
            calibration=self.calibration,
            channel_weight=self.channel_weight,
            prior_weight=self.prior_weight,
            answer_bias=self.answer_bias,
            fit_weight=self.fit_weight,
        )

    @classmethod
    def from_mapping(cls, values: dict[str, Any] | None) -> LocalOptions:
        options = cls()
        for key, value in (values or {}).items():
            if key in {f.name for f in fields(cls)}:
                kind = type(getattr(options, key))
                if kind in (int, float) and not isinstance(value, bool):
                    value = kind(value)
                setattr(options, key, value)
        return options


# What a step shows when the model wrote nothing at all (a tiny model may stop at once).
NO_ANSWER = "(The local model wrote no answer.)"


class LocalProvider:
    def __init__(
        self,
        model: str | None = None,
        *,
        name: str = "local",
        options: dict[str, Any] | LocalOptions | None = None,
        progress: Callable[[str], None] | None = None,
        workspace: Path | None = None,
    ) -> None:
        self.name = name
        self.workspace = workspace  # where a path the request names may exist
        self.model = model or default_model()
        self.options = (
            options if isinstance(options, LocalOptions) else LocalOptions.from_mapping(options)
        )
        if progress is None:
            from agentcli.providers.local.engine import stderr_progress

            progress = stderr_progress
        self.progress = progress
        self._engine: Engine | None = None
        self._answer_engine: Engine | None = None
        self._workers: set[threading.Thread] = set()
        self.last_decision: Decision | None = None  # for the benchmark and tests
        self.last_generations: list[Generation] = []
        self.last_scores: dict[str, float] = {}
        self.last_choice: ChoiceScores | None = None  # what the last scored choice weighed
        self._channel_free: dict[str, float] = {}  # intent prompt → log P(CONTENT_FREE | it)
        self._prefixes: dict[str, str] = {}  # decision system prompt → its fixed prefix
        self.activity: str | None = None  # what the step is doing now, for the live line

    def doing(self) -> str | None:
        """What the model is doing in the step under way ("choosing a tool"): the live
        line says it while the step is silent (agentcli.agent.waiting)."""
        return self.activity

    # --- the model ---------------------------------------------------------------------

    def load(self) -> Engine:
        """Blocking: find (or assemble) the file and load it, once per process; and the
        model that writes the answers, when it is another one."""
        if self._engine is None:
            self._engine = self._load(self.model)
            answer_model = self.answer_model_name()
            if answer_model is not None:
                self._answer_engine = self._load(answer_model)
        return self._engine

    def _load(self, name: str) -> Engine:
        from agentcli.paths import cache_dir

        path, info = resolve_model_file(name, progress=self.progress)
        return get_engine(
            Path(path),
            n_ctx=self.options.n_ctx,
            n_threads=self.options.n_threads,
            label=info.title if info is not None else Path(path).name,
            progress=self.progress,
            cache_dir=cache_dir() / "local-model",
        )

    def answer_model_name(self) -> str | None:
        """The model that writes free-text answers when it is not `self.model`: a base
        model chooses tools well but writes poor prose, so its catalog entry may name an
        instruct model to answer (`answer_model = "auto"`, when that one is installed);
        `"same"` never uses another; a name always does."""
        choice = self.options.answer_model
        if choice == "same" or choice == self.model:
            return None
        if choice != "auto":
            return choice
        info = known_model(self.model)
        partner = info.answer_model if info is not None else None
        if partner and local_available(partner):
            return partner
        return None

    def reports_results(self) -> bool:
        """Whether the answer after a tool call is a template filled in from the call and
        its result (`template`; `quote`, its older name) rather than a text the model
        writes (`model`); `auto`: the template for the catalogue's tiny models, let any
        other model write."""
        choice = self.options.after_tool
        if choice in ("template", "quote", "model"):
            return choice != "model"
        info = known_model(self.answer_model_name() or self.model)
        return info is not None and info.template_after_tool

    def prompt_style(self, engine: Engine, model: str | None = None) -> str:
        style = self.options.prompt_style
        if style in ("chat", "plain") and (model is None or model == self.model):
            return style
        info = known_model(model or self.model)
        if info is not None:
            return "chat" if info.instruct else "plain"
        return "chat" if engine.template_source == "gguf" else "plain"

    # --- one step ------------------------------------------------------------------------

    def stream(self, request: ModelRequest) -> AsyncIterator[ev.Event | ev.StepEnd]:
        return self._step(request)

    async def _step(self, request: ModelRequest) -> AsyncIterator[ev.Event | ev.StepEnd]:
        self.activity = "loading the local model" if self._engine is None else None
        engine = self._engine or await asyncio.to_thread(self.load)
        self.last_decision = None
        self.last_generations = []
        self.last_scores = {}
        self.last_choice = None
        usage = ev.Usage()
        message_id = new_id("msg")
        messages = request.messages
        offered = offered_tools(request.tools, self.options.tools)
        decision: Decision | None = None
        if offered and self._may_call(messages):
            self.activity = "choosing a tool"
            async with contextlib.aclosing(
                self._decide(engine, offered, messages, usage)
            ) as decisions:
                async for item in decisions:
                    if isinstance(item, Decision):
                        decision = item
                    else:
                        yield item
        if decision is not None and decision.is_call:
            call_id = new_id("call")
            yield ev.ToolCallStart(
                tool_call_id=call_id,
                tool_call_name=decision.name,
                parent_message_id=message_id,
                metadata={"provider": self.name, "model": self.model},
            )
            yield ev.ToolCallArgs(tool_call_id=call_id, delta=decision.arguments)
            yield ev.ToolCallEnd(tool_call_id=call_id)
            yield ev.Custom(name="usage", value=usage.to_wire(self.name, self.model))
            yield ev.StepEnd(finish_reason="tool_calls", usage=usage)
            return
        if messages and messages[-1].role == "tool" and self.reports_results():
            quoted = report_results(messages, limit=self.options.result_chars)
            yield ev.TextMessageStart(message_id=message_id)
            for line in quoted.splitlines(keepends=True):
                yield ev.TextMessageContent(message_id=message_id, delta=line)
            yield ev.TextMessageEnd(message_id=message_id)
            yield ev.Custom(name="usage", value=usage.to_wire(self.name, self.model))
            yield ev.StepEnd(finish_reason="stop", usage=usage)
            return
        finish = "stop"
        text_open = False
        self.activity = "writing the answer"
        async with contextlib.aclosing(self._answer(engine, request)) as answer:
            async for kind, value in answer:
                if kind == "text":
                    if not text_open:
                        text_open = True
                        yield ev.TextMessageStart(message_id=message_id)
                    yield ev.TextMessageContent(message_id=message_id, delta=value)
                else:
                    generation: Generation = value
                    usage.add(ev.Usage(generation.prompt_tokens, generation.completion_tokens))
                    if generation.finish_reason in ("length", "time"):
                        finish = "length"
                    if not generation.text.strip():
                        if not text_open:
                            text_open = True
                            yield ev.TextMessageStart(message_id=message_id)
                        yield ev.TextMessageContent(message_id=message_id, delta=NO_ANSWER)
        if text_open:
            yield ev.TextMessageEnd(message_id=message_id)
        yield ev.Custom(name="usage", value=usage.to_wire(self.name, self.model))
        yield ev.StepEnd(finish_reason=finish, usage=usage)

    def _may_call(self, messages: list[Message]) -> bool:
        if not messages or messages[-1].role not in ("user", "tool"):
            return False
        return tool_rounds_since_user(messages) < self.options.tool_rounds

    async def _decide(
        self, engine: Engine, offered: list[dict], messages: list[Message], usage: ev.Usage
    ) -> AsyncIterator[Decision | ev.Event]:
        """Yields warnings, then the decision (answer when the call is unusable).

        `choice = "scored"`: the tool's name is chosen by scoring each name's probability
        after `{"name":"` (plus `answer_bias` for answering), then the arguments are
        written under that tool's grammar. `"greedy"`: one grammar for the whole decision,
        decoded greedily."""
        options = self.options
        names = [tool["name"] for tool in offered]
        prefix = decision_prefix()
        request = last_user_request(messages)
        examples = select_examples(request, offered) if options.few_shot else []
        text = self.decision_text(engine, offered, messages, examples)
        if self.prompt_style(engine) == "chat":
            await self._blocking(engine.prime, self.fixed_prefix(engine, offered))
        if options.choice == "scored":
            prompt_tokens = engine.tokenize(text + prefix)
            scores = await self.choice_scores(engine, offered, messages, examples, prompt_tokens)
            final = combine_scores(scores, options.weights())
            usage.add(ev.Usage(len(prompt_tokens), 0))
            name = choose(scores, options.weights())
            name = spared_choice(name, request, names, self.workspace)
            self.last_scores = dict(zip(scores.candidates, final, strict=True))
            self.last_choice = scores
            if name == ANSWER:
                self.last_decision = Decision(ANSWER)
                yield self.last_decision
                return
            tool = offered[names.index(name)]
            copy_from = (
                last_user_request(messages)
                if options.copy_arguments and messages[-1].role == "user"
                else None
            )
            schema = arguments_grammar(
                tool,
                arguments=options.arguments,
                copy_from=copy_from,
                workspace=self.workspace,
                spelled=options.spelled_arguments,
                request=request,
            )
            head = f'{prefix}{name}","arguments":'
            own = own_examples(tool, request, offered) if options.few_shot else []
            closing = "}"
            if self.prompt_style(engine) == "plain" or options.argument_prompt == "shared":
                prompt: str | list[int] = text + head
            else:
                turns = self._fit_turns(
                    engine,
                    lambda msgs, chars: argument_turns(
                        tool, msgs, examples=own, result_chars=chars
                    ),
                    messages,
                    options.call_tokens,
                )
                prompt = engine.format_chat(turns) + head
        else:
            schema = decision_grammar(offered, arguments=options.arguments, request=request)
            prompt, head, closing = text, "", ""
        grammar = engine.grammar(schema, schema=True)
        result: Generation | None = None
        async with contextlib.aclosing(
            self._run(
                engine, prompt, options.call_tokens, options.call_seconds, grammar, (), 1.0, False
            )
        ) as run:
            async for kind, value in run:
                if kind == "done":
                    result = value
        assert result is not None
        usage.add(ev.Usage(result.prompt_tokens, result.completion_tokens))
        try:
            decision = parse_decision(head + result.text + closing, names)
        except ValueError as exc:
            why = {"length": "its token limit", "time": "its time limit"}.get(result.finish_reason)
            detail = f"it reached {why}" if why else str(exc)
            yield ev.Custom(
                name="warning",
                value={"message": f"local model: no usable tool call ({detail}); answering"},
            )
            decision = Decision(ANSWER)
        spared = spared_decision(decision, request, self.workspace)
        if spared is not decision:
            yield ev.Custom(
                name="warning",
                value={
                    "message": "local model: it chose to replace a whole file the request "
                    "did not ask to replace; no call made (say 'overwrite FILE' if you mean it)"
                },
            )
            decision = spared
        if decision.is_call:
            key = (decision.name, canonical_arguments(decision.arguments))
            if key in calls_since_user(messages):
                decision = Decision(ANSWER)  # the same call again: a tiny model's loop
        self.last_decision = decision
        yield decision

    def fixed_prefix(self, engine: Engine, offered: list[dict]) -> str:
        """The beginning every decision prompt for these tools shares: the system prompt
        with the tool list, as the chat template writes it (up to the first user turn's
        text). Kept evaluated between runs (`Engine.prime`)."""
        system = decision_system_prompt(offered)
        prefix = self._prefixes.get(system)
        if prefix is None:
            one, two = (
                engine.format_chat([Turn("system", system), Turn("user", text)])
                for text in ("a", "b")
            )
            prefix = one[
                : next(i for i, (a, b) in enumerate(zip(one, two, strict=False)) if a != b)
            ]
            self._prefixes[system] = prefix
        return prefix

    def decision_text(
        self,
        engine: Engine,
        offered: list[dict],
        messages: list[Message],
        examples: list[Example],
    ) -> str:
        """The prompt a decision is made after (without `{"name":"`)."""
        if self.prompt_style(engine) == "plain":
            return plain_decision_prompt(offered, last_user_request(messages), examples=examples)
        turns = self._fit_turns(
            engine,
            lambda msgs, chars: decision_turns(
                offered, msgs, examples=examples, result_chars=chars
            ),
            messages,
            self.options.call_tokens,
        )
        return engine.format_chat(turns)

    async def choice_scores(
        self,
        engine: Engine,
        offered: list[dict],
        messages: list[Message],
        examples: list[Example],
        prompt: list[int],
        *,
        exclude: str | None = None,
    ) -> ChoiceScores:
        """Everything the scored choice weighs (see `combine_scores`) after `prompt`
        (the decision text and `{"name":"`, tokenized); `exclude` leaves one example out
        of the prior (the benchmark's calibration)."""
        options = self.options
        candidates = [*(tool["name"] for tool in offered), ANSWER]
        continuations = [f'{name}"' for name in candidates]
        prefix = decision_prefix()
        direct = await self._blocking(engine.score_first_tokens, prompt, continuations)
        content_free = None
        if options.calibration:
            free_messages = with_request(messages, CONTENT_FREE)
            free_text = self.decision_text(engine, offered, free_messages, examples)
            content_free = await self._blocking(
                engine.score_first_tokens, engine.tokenize(free_text + prefix), continuations
            )
        request = clip(last_user_request(messages), 400)
        channel = channel_free = None
        if options.channel_weight:
            channel, channel_free = [], []
            for name in candidates:
                intent_text = intent_prompt(name, offered)
                intent = engine.tokenize(intent_text)
                free = self._channel_free.get(intent_text)
                if free is None:  # the same for every request: scored once per process
                    score, free = await self._blocking(
                        engine.score, intent, [" " + request, " " + CONTENT_FREE]
                    )
                    self._channel_free[intent_text] = free
                else:
                    [score] = await self._blocking(engine.score, intent, [" " + request])
                channel.append(score)
                channel_free.append(free)
        prior_map = tool_prior(request, offered, exclude=exclude)
        fit_map = argument_fit(request, offered, self.workspace)
        return ChoiceScores(
            candidates=candidates,
            direct=direct,
            content_free=content_free,
            channel=channel,
            channel_free=channel_free,
            prior=[prior_map[name] for name in candidates],
            fit=[fit_map.get(name, 0.0) for name in candidates],
        )

    async def _blocking(self, function: Callable[..., Any], *args: Any) -> Any:
        """A blocking engine call in a worker thread; leaving early cancels it."""
        cancel = threading.Event()
        try:
            return await asyncio.to_thread(function, *args, cancel)
        finally:
            cancel.set()

    async def _answer(
        self, engine: Engine, request: ModelRequest
    ) -> AsyncIterator[tuple[str, Any]]:
        options = self.options
        if self._answer_engine is not None:
            engine = self._answer_engine
            style = self.prompt_style(engine, self.answer_model_name())
        else:
            style = self.prompt_style(engine)
        if style == "plain":
            prompt = plain_answer_prompt(request.messages, result_chars=options.result_chars)
            stop: tuple[str, ...] = PLAIN_STOP
        else:
            system = ANSWER_SYSTEM if request.tools else clip(request.system, 2000)
            turns = self._fit_turns(
                engine,
                lambda msgs, chars: answer_turns(system, msgs, result_chars=chars),
                request.messages,
                options.max_tokens,
            )
            prompt = engine.format_chat(turns)
            stop = tuple(engine.stop_strings())
        async with contextlib.aclosing(
            self._run(
                engine,
                prompt,
                options.max_tokens,
                options.max_seconds,
                None,
                stop,
                options.repeat_penalty,
                True,
            )
        ) as run:
            async for item in run:
                yield item

    def _fit_turns(
        self,
        engine: Engine,
        build: Callable[[list[Message], int], list[Turn]],
        messages: list[Message],
        reserve: int,
    ) -> list[Turn]:
        """The chat turns, fitted to the context with `reserve` tokens left for the
        output: tool results are clipped harder, then the oldest turns dropped."""
        budget = self.options.n_ctx - reserve - 16
        chars = self.options.result_chars
        start = 0
        while True:
            turns = build(messages[start:], chars)
            size = len(engine.tokenize(engine.format_chat(turns)))
            if size <= budget:
                return turns
            if chars > 500:
                chars //= 2
                continue
            later = [i for i in range(start + 1, len(messages)) if messages[i].role == "user"]
            if not later:
                raise ProviderError(
                    f"local: the request ({size} tokens) is too long for the local "
                    f"model's context of {self.options.n_ctx} tokens (providers.local.n_ctx)"
                )
            start = later[0]

    async def _run(
        self,
        engine: Engine,
        prompt: str | list[int],
        max_tokens: int,
        max_seconds: float,
        grammar: Any,
        stop: tuple[str, ...],
        repeat_penalty: float,
        stream_text: bool,
    ) -> AsyncIterator[tuple[str, Any]]:
        """One generation in a worker thread: yields ("text", piece)... then ("done",
        Generation). Leaving early (Ctrl-C, a closed stream) stops it at the next token."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        cancel = threading.Event()

        def put(kind: str, value: Any) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, (kind, value))
            except RuntimeError:  # the event loop is gone
                cancel.set()

        def work() -> None:
            try:
                result = engine.generate(
                    prompt,
                    max_tokens=max_tokens,
                    max_seconds=max_seconds,
                    grammar=grammar,
                    stop=stop,
                    on_text=(lambda text: put("text", text)) if stream_text else None,
                    cancel=cancel,
                    repeat_penalty=repeat_penalty,
                )
            except BaseException as exc:  # handed to the event loop's side
                put("error", exc)
            else:
                put("done", result)
            finally:
                self._workers.discard(threading.current_thread())

        thread = threading.Thread(target=work, name="agentcli-local-model", daemon=True)
        self._workers.add(thread)
        thread.start()
        try:
            while True:
                kind, value = await queue.get()
                if kind == "error":
                    if isinstance(value, ProviderError):
                        raise value
                    raise ProviderError(
                        f"local: generation failed: {type(value).__name__}: {value}"
                    ) from value
                if kind == "done":
                    self.last_generations.append(value)
                    yield kind, value
                    return
                yield kind, value
        finally:
            cancel.set()

    async def aclose(self) -> None:
        """Waits (briefly) for a cancelled generation to notice its flag and stop."""
        for thread in list(self._workers):
            await asyncio.to_thread(thread.join, 15)
