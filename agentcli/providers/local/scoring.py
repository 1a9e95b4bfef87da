"""How the tool (or answering) is chosen: scores from the model and from the examples,
combined into one per candidate. The model's parts are the log-probability of writing
each name after the few-shot prompt (less the prompt's own bias) and the "channel" score,
how likely the request is after a sentence stating each tool's intent; the prior's parts
are the router's likeness to each tool's examples (agentcli.providers.local.router
.tool_prior) and how well the request fills each tool's arguments
(agentcli.providers.local.fit)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from agentcli.providers.local.decision import ANSWER
from agentcli.providers.local.prompts import first_sentence
from agentcli.records import dataclass, replace

# What a user who wants each tool says it is for, in a user's words: the "channel" score
# of a tool is how likely the request is after "The user wants to INTENT. The user says:".
TOOL_INTENTS = {
    "read_file": "show, open, print or read the contents of a file",
    "list_directory": "list the files and folders in a directory",
    "search_content": "search for a word or text inside the files, like grep",
    "search_files": "find files by their name or extension, like all .py files",
    "calculator": "calculate a math expression with numbers",
    "run_shell": "run or execute a shell command",
    "system_info": "know about this computer: its operating system, CPU, memory or disk",
    "fetch_url": "fetch or download a web page from a URL",
    "write_file": "create or write a file with some content",
    "web_search": "search the web or the internet",
    "edit_file": "change or replace some text in a file",
    "create_directory": "create a new directory or folder",
    "run_python": "run some Python code",
    "ask_user": "be asked a question",
}
ANSWER_INTENT = "chat, ask a general knowledge question, or get a text written such as a poem"


def intent_prompt(name: str, tools: Sequence[dict[str, Any]]) -> str:
    if name == ANSWER:
        intent = ANSWER_INTENT
    elif name in TOOL_INTENTS:
        intent = TOOL_INTENTS[name]
    else:
        tool = next((t for t in tools if t["name"] == name), {"description": name})
        intent = "use a tool that does this: " + first_sentence(tool.get("description", name))
    return f"The user wants to {intent}. The user says:"


# What stands in for the request when the prompt's own bias is measured ("contextual
# calibration"): a small model shown a few-shot prompt favours some names whatever the
# request says, and that bias is taken off.
CONTENT_FREE = "N/A"


@dataclass(frozen=True, slots=True)
class ChoiceScores:
    """What the scored choice weighs, one value per candidate (answering last)."""

    candidates: list[str]
    direct: list[float]  # log P(name | few-shot prompt and the request)
    content_free: list[float] | None  # log P(name | the same prompt, request CONTENT_FREE)
    channel: list[float] | None  # log P(request | "the user wants to INTENT")
    channel_free: list[float] | None  # log P(CONTENT_FREE | the same intent)
    prior: list[float]  # likeness of the request to each tool's examples
    # how well the request fills each tool's arguments (agentcli.providers.local.fit)
    fit: list[float] | None = None


@dataclass(frozen=True, slots=True)
class ChoiceWeights:
    """The defaults were chosen by `bench/local_model.py --calibrate` (leave-one-out over
    the built-in tools' examples) for SmolLM2-135M, but for `channel_weight`: off, since
    the channel score costs a prompt per tool (seconds a step on two cores; the ablation
    `--formats channel-core` measures what it adds); and `fit_weight`, chosen on the
    benchmark's development sets from their cached scores (their share right rises up to
    4 and changes by at most one request beyond it), never on the held-out set."""

    calibration: float = 0.5
    channel_weight: float = 0.0
    prior_weight: float = 12.0
    answer_bias: float = 2.0
    fit_weight: float = 4.0


def _normalized(values: Sequence[float]) -> list[float]:
    top = max(values)
    total = math.log(sum(math.exp(v - top) for v in values)) + top
    return [v - total for v in values]


def combine_scores(scores: ChoiceScores, weights: ChoiceWeights) -> list[float]:
    """One score per candidate: the model's log-probability of writing the name after
    the few-shot prompt, less `calibration` times the prompt's own bias, plus how much
    likelier the request is under the tool's intent than a content-free one (each
    normalized over the candidates), plus the examples' likeness."""
    final = _normalized(scores.direct)
    if scores.content_free is not None and weights.calibration:
        bias = _normalized(scores.content_free)
        final = [f - weights.calibration * b for f, b in zip(final, bias, strict=True)]
    if scores.channel is not None and weights.channel_weight:
        free = scores.channel_free or [0.0] * len(scores.channel)
        channel = _normalized([c - f for c, f in zip(scores.channel, free, strict=True)])
        final = [f + weights.channel_weight * c for f, c in zip(final, channel, strict=True)]
    final = [f + weights.prior_weight * p for f, p in zip(final, scores.prior, strict=True)]
    if scores.fit is not None and weights.fit_weight:
        final = [f + weights.fit_weight * g for f, g in zip(final, scores.fit, strict=True)]
    final[-1] += weights.answer_bias
    return final


def choose(scores: ChoiceScores, weights: ChoiceWeights) -> str:
    """The candidate with the highest combined score."""
    final = combine_scores(scores, weights)
    return scores.candidates[max(range(len(final)), key=final.__getitem__)]


def model_only(weights: ChoiceWeights) -> ChoiceWeights:
    """The weights with the prior (the examples' likeness and the arguments' fit) taken
    out: what the model decides alone."""
    return replace(weights, prior_weight=0.0, fit_weight=0.0)


def prior_only(scores: ChoiceScores) -> ChoiceScores:
    """The scores with the model's parts taken out: what the examples, the arguments'
    fit and the bias towards answering decide alone, with no model at all."""
    flat = [0.0] * len(scores.candidates)
    return ChoiceScores(scores.candidates, flat, None, None, None, scores.prior, scores.fit)
