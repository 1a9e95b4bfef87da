"""How full the model's context window is: the REPL's toolbar meter (`ctx 12%`) and the
`/context` breakdown. Tokens come from the last usage the provider reported, plus an
estimate of what was added since; with no report yet, from the estimate alone. The window
comes from the configuration, the local model's context, or a few well-known models; when
none of them knows it, the meter says `ctx ?` rather than guess."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentcli.agent.compaction import messages_tokens, text_tokens, tools_tokens
from agentcli.records import dataclass

if TYPE_CHECKING:
    from agentcli.agent.session import Agent
    from agentcli.settings import RunSettings

# Context windows of well-known hosted models, by the start of their names (longest first
# wins). A model served elsewhere under its own name is usually the same model.
KNOWN_WINDOWS = {
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "claude-": 200_000,
}


@dataclass(frozen=True, slots=True)
class Window:
    tokens: int | None  # None: not known
    source: str  # where the number comes from, in words


def known_window(settings: RunSettings) -> Window:
    """The model's window as far as it is known: `context.windows."PROVIDER:MODEL"` or a
    `context.window` the user set, the local provider's `n_ctx`, the table above."""
    from agentcli.settings import context_window

    config, model = settings.config, str(settings.model)
    if config.get(f"context.windows.{model}") is not None:  # a name may hold a dot
        return Window(context_window(config, model), f'context.windows."{model}"')
    if config.source("context.window") != "default":
        return Window(config.get("context.window"), "context.window")
    from agentcli.providers.table import provider_spec

    spec = provider_spec(settings.provider.type)
    own = spec.context_window(settings) if spec and spec.context_window else None
    if own is not None:
        return Window(own, f"providers.{settings.provider.name}.n_ctx")
    name = settings.model.name.rsplit("/", 1)[-1].lower()  # `openai/gpt-4o` on a router
    for prefix in sorted(KNOWN_WINDOWS, key=len, reverse=True):
        if name.startswith(prefix):
            return Window(KNOWN_WINDOWS[prefix], "known for this model")
    return Window(None, "not known for this model; set context.window")


@dataclass(frozen=True, slots=True)
class ContextUse:
    system: int  # estimated tokens of the system prompt (with the summary, if any)
    tools: int  # of the tools' schemas
    messages: int  # of the user and assistant messages, with their tool calls
    results: int  # of the tool results
    reported: int | None  # what the provider last reported, plus the estimate since
    window: Window
    compaction_window: int  # what compaction measures against (context.window if unknown)
    threshold: float
    keep_turns: int

    @property
    def estimated(self) -> int:
        return self.system + self.tools + self.messages + self.results

    @property
    def used(self) -> int:
        return self.reported if self.reported is not None else self.estimated

    @property
    def percent(self) -> int | None:
        if not self.window.tokens:
            return None
        return round(100 * self.used / self.window.tokens)


def measure(agent: Agent) -> ContextUse:
    loop, conversation = agent.loop, agent.session.conversation
    system = loop.current_system(conversation)
    visible = conversation.visible()
    calls = [m for m in visible if m.role != "tool"]
    results = [m for m in visible if m.role == "tool"]
    reported = None
    if loop.reported is not None and loop.reported.start == conversation.start:
        since = conversation.messages[loop.reported.count :]
        reported = loop.reported.tokens + messages_tokens(since)
    compactor = loop.compactor
    config = agent.settings.config
    return ContextUse(
        system=text_tokens(system),
        tools=tools_tokens(loop.tools),
        messages=messages_tokens(calls),
        results=messages_tokens(results),
        reported=reported,
        window=known_window(agent.settings),
        compaction_window=compactor.window if compactor else config.get("context.window"),
        threshold=compactor.threshold if compactor else config.get("context.threshold"),
        keep_turns=compactor.keep_turns if compactor else config.get("context.keep_turns"),
    )


def meter(use: ContextUse) -> str:
    """The toolbar's segment: `ctx 12%`, or `ctx ?` when the window is not known."""
    return "ctx ?" if use.percent is None else f"ctx {use.percent}%"


def details(use: ContextUse) -> list[str]:
    """`/context`: what fills the window, each part in tokens, and when compaction comes."""
    window = use.window
    how = "as the provider last reported" if use.reported is not None else "estimated"
    if window.tokens:
        head = f"{use.used:,} of {window.tokens:,} tokens ({use.percent}%), {how}"
    else:
        head = f"{use.used:,} tokens, {how}; window not known"
    lines = [f"context: {head}"]
    parts: list[tuple[str, Any]] = [
        ("system prompt", use.system),
        ("tool schemas", use.tools),
        ("messages", use.messages),
        ("tool results", use.results),
    ]
    lines += [f"  {label:<14}{tokens:>9,}" for label, tokens in parts]
    lines.append(f"  {'(estimates)':<14}{use.estimated:>9,}")
    shown = f"{window.tokens:,}" if window.tokens else "?"
    lines.append(f"  {'window':<14}{shown:>9}  ({window.source})")
    at = int(use.compaction_window * use.threshold)
    lines.append(
        f"  compaction at {use.threshold:.0%} of {use.compaction_window:,}"
        f"{_compaction_source(use)} = {at:,} estimated tokens (now {use.estimated:,}); "
        f"the latest {use.keep_turns} turns stay"
    )
    return lines


def _compaction_source(use: ContextUse) -> str:
    """Where the number compaction measures against comes from, when it is not the
    window shown above (so the two lines never seem to contradict each other)."""
    if use.window.tokens == use.compaction_window:
        return ""
    if not use.window.tokens:
        return " (context.window, assumed while the model's window is not known)"
    return " (context.window, not the model's window)"
