"""Which tools a small model is offered, and how alike a request is to each tool's
examples: a TF-IDF nearest-neighbour router over requests, no model.

The examples come from the tools themselves (`Tool.examples`, in a tool's spec as
`examples`: pairs of a request and the arguments that serve it), or, for the built-in
tools, from agentcli.tools.examples; so a configuration, MCP or plug-in tool that gives
examples is routable like a built-in one. The router does two things with them: it picks
the few-shot examples shown to the model (`select_examples`) and it gives each tool a
prior, the likeness of the request to that tool's most alike example (`tool_prior`).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Sequence
from typing import Any

from agentcli.providers.local.decision import ANSWER
from agentcli.records import dataclass, field

# Tools a small model is offered by default: the ones a newcomer's first questions need.
# (The rest still run when a bigger model asks for them; `tools = "all"` offers them all.)
CORE_TOOLS = (
    "read_file",
    "list_directory",
    "search_files",
    "search_content",
    "calculator",
    "run_shell",
    "write_file",
    "edit_file",
    "create_directory",
    "system_info",
    "fetch_url",
    "web_search",
)


def offered_tools(tools: Sequence[dict[str, Any]], which: str | Sequence[str]) -> list[dict]:
    """The tools put in the prompt and the grammar, in the order of the request: `"core"`
    (CORE_TOOLS, and every tool that brings its own examples: a configuration, MCP or
    plug-in tool that says what it is asked for), `"all"`, or a list of names."""
    if which == "all":
        return list(tools)
    if which == "core":
        return [tool for tool in tools if tool["name"] in CORE_TOOLS or tool.get("examples")]
    return [tool for tool in tools if tool["name"] in set(which)]


@dataclass(frozen=True, slots=True)
class Example:
    request: str
    tool: str  # a tool name, or ANSWER
    arguments: dict[str, Any] | None = field(default=None, hash=False, compare=False)


# Requests that need no tool: always in the pool, so that answering stays a choice.
ANSWER_EXAMPLES: tuple[Example, ...] = tuple(
    Example(request, ANSWER)
    for request in (
        "what does HTTP stand for?",
        "how are you?",
        "summarize the plot of Romeo and Juliet",
        "translate hello into French",
        "hello there!",
        "what is the capital of Italy?",
        "tell me a joke",
        "thank you!",
        "who wrote Hamlet?",
        "explain what a variable is",
        "write a short poem about autumn",
    )
)


def tool_examples(tool: dict[str, Any]) -> list[Example]:
    """A tool's examples: its spec's `examples` (pairs of request and arguments), else
    the built-in ones for its name. A malformed pair is skipped, not fatal: examples
    only route."""
    from agentcli.tools.examples import BUILTIN_EXAMPLES

    pairs = tool.get("examples") or BUILTIN_EXAMPLES.get(tool["name"], ())
    examples = []
    for pair in pairs:
        if isinstance(pair, list | tuple) and len(pair) == 2:
            request, arguments = pair
            if isinstance(request, str) and request.strip() and isinstance(arguments, dict):
                examples.append(Example(request, tool["name"], dict(arguments)))
    return examples


def examples_for(tools: Sequence[dict[str, Any]]) -> tuple[Example, ...]:
    """The example pool for these tools: each tool's examples, then the answering ones."""
    pool = [example for tool in tools for example in tool_examples(tool)]
    return (*pool, *ANSWER_EXAMPLES)


_STOP_WORDS = frozenset(
    ["a", "an", "the", "of", "to", "for", "me", "my", "please", "can", "could", "you", "i"]
)


_MATH = re.compile(r"[0-9.()]*[0-9][0-9.()]*(?:(?:[-+*/^%]|\*\*)[0-9.()]+)+")
# load_config, parseArgs, API_KEY: a name in code
_IDENTIFIER = re.compile(r"[a-z]+(?:_[a-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+|[A-Z]+(?:_[A-Z0-9]+)+")
_FUNCTION_CALL = re.compile(r"[a-z]{2,5}\([0-9.,+*/^% -]+\)")  # sqrt(144), log(2)


def _stem(word: str) -> str:
    """A crude stem: plural taken off, then the first five letters ("files" and "file",
    "contents" and "content" alike)."""
    if word.isalpha():
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        return word[:5]
    return word


def _features(text: str) -> set[str]:
    """Words, word pairs and shapes (a file name, a number, a URL, arithmetic) that make
    two requests alike."""
    features: set[str] = set()
    words: list[str] = []
    for raw in text.split():
        word = raw.strip("?!,;:'\"").lower()
        if not word:
            continue
        if re.match(r"https?://", word):
            words.append("<url>")
        elif _MATH.fullmatch(word) or _FUNCTION_CALL.fullmatch(word):  # 45/9: not a path
            words.append("<math>")
        elif re.fullmatch(r"[0-9.]+", word.strip("()")):
            words.append("<number>")
        elif re.fullmatch(r"\*?\.[a-z0-9]{1,5}", word):
            words.append("<ext>")  # .log, *.py: a kind of file
        elif re.fullmatch(r"[\w.-]*\w\.[a-z0-9]{1,5}", word) or "/" in word.strip("/"):
            words.append("<file>")
        elif re.fullmatch(_IDENTIFIER, raw.strip("?!,;:'\"")):
            words.append("<ident>")  # load_config, parseArgs: a name in code
        elif re.fullmatch(r"[-+*/^%x]|\*\*", word):
            words.append("<op>")
        elif word not in _STOP_WORDS:
            words.append(_stem(word.strip("()")))
    features.update(words)
    features.update(f"{a} {b}" for a, b in itertools.pairwise(words))
    return features


@functools.lru_cache(maxsize=32)
def _feature_weights(pool: tuple[Example, ...]) -> dict[str, float]:
    """Inverse document frequency over the example pool: a feature most examples share
    ("what", "show") tells less about the tool than a rare one ("<math>", "grep")."""
    counts: dict[str, int] = {}
    for example in pool:
        for feature in _features(example.request):
            counts[feature] = counts.get(feature, 0) + 1
    total = len(pool)
    unseen = math.log(total + 1) + 1
    weights = {feature: math.log((total + 1) / (n + 1)) + 1 for feature, n in counts.items()}
    return {**weights, "": unseen}  # "": the weight of a feature no example has


def _similarity(fa: set[str], fb: set[str], weights: dict[str, float]) -> float:
    if not fa or not fb:
        return 0.0
    unseen = weights[""]

    def squared(features: set[str]) -> float:
        return sum(weights.get(f, unseen) ** 2 for f in features)

    return squared(fa & fb) / (squared(fa) * squared(fb)) ** 0.5


def similarity(a: str, b: str, pool: tuple[Example, ...] | None = None) -> float:
    """0..1: how alike two requests are (cosine of their feature sets, each feature
    weighted by its rarity among the pool's examples; by default the built-in tools')."""
    if pool is None:
        pool = _builtin_pool()
    return _similarity(_features(a), _features(b), _feature_weights(pool))


@functools.cache
def _builtin_pool() -> tuple[Example, ...]:
    from agentcli.tools.examples import BUILTIN_EXAMPLES

    return examples_for([{"name": name} for name in BUILTIN_EXAMPLES])


def _likeness(request: str, pool: tuple[Example, ...]) -> list[tuple[float, Example]]:
    weights = _feature_weights(pool)
    features = _features(request)
    return [(_similarity(features, _features(ex.request), weights), ex) for ex in pool]


def select_examples(
    request: str, tools: Sequence[dict[str, Any]], k: int = 8, *, exclude: str | None = None
) -> list[Example]:
    """The `k` examples most like `request` (usable with the offered tools), least alike
    first: a small model follows the last, most similar example best. At least one
    `answer` example is always among them, so that answering stays a choice."""
    pool = examples_for(tools)
    scored = [(score, ex) for score, ex in _likeness(request, pool) if ex.request != exclude]
    ranked = sorted(scored, key=lambda item: item[0], reverse=True)
    chosen: list[tuple[float, Example]] = []
    per_tool: dict[str, int] = {}
    for score, example in ranked:
        if len(chosen) >= k:
            break
        if per_tool.get(example.tool, 0) >= 2:
            continue
        per_tool[example.tool] = per_tool.get(example.tool, 0) + 1
        chosen.append((score, example))
    if not any(example.tool == ANSWER for _, example in chosen):
        answer = next(item for item in ranked if item[1].tool == ANSWER)
        chosen[-1:] = [answer] if len(chosen) >= k else [*chosen[-1:], answer]
    return [example for _, example in sorted(chosen, key=lambda item: item[0])]


def tool_prior(
    request: str, tools: Sequence[dict[str, Any]], *, exclude: str | None = None
) -> dict[str, float]:
    """For each offered tool (and `answer`): the similarity of the request to that
    tool's most alike example; 0 for a tool without examples."""
    prior = {tool["name"]: 0.0 for tool in tools}
    prior[ANSWER] = 0.0
    for score, example in _likeness(request, examples_for(tools)):
        if example.request != exclude:
            prior[example.tool] = max(prior[example.tool], score)
    return prior


def own_examples(
    tool: dict[str, Any], request: str, tools: Sequence[dict[str, Any]]
) -> list[Example]:
    """`tool`'s own examples (weighed in the pool of all offered `tools`), least like
    `request` first: the few-shot part of the prompt that writes a call's arguments."""
    scored = _likeness(request, examples_for(tools))
    own = [item for item in scored if item[1].tool == tool["name"]]
    return [example for _, example in sorted(own, key=lambda item: item[0])]
