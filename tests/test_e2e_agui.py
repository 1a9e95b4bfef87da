"""End-to-end: `--output jsonl` is a valid AG-UI event stream, checked line by line against the
`ag-ui-protocol` package's models, plus the ordering rules a consumer relies on."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from typing import Any

import pytest
from ag_ui.core import (
    CustomEvent,
    Event,
    EventType,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from pydantic import BaseModel, TypeAdapter

from tests.conftest import (
    NOTES_LINES,
    README_LINES,
    RunCli,
    StartCli,
    assert_one_error,
    numbered,
)
from tests.scripted_server import Reply, ScriptedServer

EVENT = TypeAdapter(Event)


def _event_classes() -> dict[str, type[BaseModel]]:
    """type value -> model class, from the members of the `Event` union."""
    union = Event.__origin__.__args__  # type: ignore[attr-defined]
    return {cls.model_fields["type"].default.value: cls for cls in union}


CLASSES = _event_classes()


def _alias(name: str, field: Any) -> str:
    return field.alias or name


def unknown_keys(raw: dict[str, Any], model: BaseModel, where: str) -> Iterator[str]:
    """Keys of `raw` that are not a field alias of `model`, recursing into nested models.
    (The models accept extra keys, so validation alone would not notice them.)"""
    fields = type(model).model_fields
    known = {_alias(name, field): name for name, field in fields.items()}
    for key, value in raw.items():
        if key not in known:
            yield f"{where}.{key}"
            continue
        attr = getattr(model, known[key])
        if isinstance(attr, BaseModel) and isinstance(value, dict):
            yield from unknown_keys(value, attr, f"{where}.{key}")
        elif isinstance(attr, list) and isinstance(value, list):
            for i, (item_model, item_raw) in enumerate(zip(attr, value, strict=True)):
                if isinstance(item_model, BaseModel) and isinstance(item_raw, dict):
                    yield from unknown_keys(item_raw, item_model, f"{where}.{key}[{i}]")


# An application's own JSON, where null is a value like any other (a remote agent's state).
FREE_FORM = frozenset({"$.snapshot", "$.delta", "$.value"})


def null_paths(value: Any, where: str = "$") -> Iterator[str]:
    if where in FREE_FORM:
        return
    if value is None:
        yield where
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from null_paths(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from null_paths(item, f"{where}[{i}]")


def parse_and_validate(stdout: str) -> list[tuple[dict[str, Any], BaseModel]]:
    """Every stdout line: JSON, a valid AG-UI event of its declared type, no nulls, no
    unknown keys. Returns (raw, model) pairs."""
    assert stdout.endswith("\n"), "the last line is not terminated"
    events = []
    for number, line in enumerate(stdout.splitlines(), start=1):
        raw = json.loads(line)
        assert isinstance(raw, dict), line
        assert raw.get("type") in CLASSES, f"line {number}: unknown type: {line}"
        model = CLASSES[raw["type"]].model_validate(raw)
        union_model = EVENT.validate_python(raw)
        assert type(union_model) is type(model)
        assert list(null_paths(raw)) == [], f"line {number} has nulls: {line}"
        assert list(unknown_keys(raw, model, raw["type"])) == [], f"line {number}: {line}"
        assert isinstance(raw.get("timestamp", 0), int)
        events.append((raw, model))
    assert events, "no events on stdout"
    return events


def _of(events: list[tuple[dict[str, Any], BaseModel]], cls: type[BaseModel]) -> list[Any]:
    return [model for _, model in events if isinstance(model, cls)]


def check_run_structure(events: list[tuple[dict[str, Any], BaseModel]], last: type) -> None:
    models = [model for _, model in events]
    assert isinstance(models[0], RunStartedEvent)
    assert isinstance(models[-1], last)
    assert len(_of(events, RunStartedEvent)) == 1
    assert len(_of(events, RunFinishedEvent)) + len(_of(events, RunErrorEvent)) == 1


def check_text_messages(models: list[BaseModel]) -> dict[str, str]:
    """START/CONTENT/END pair up by messageId; returns each message's text."""
    open_ids: set[str] = set()
    texts: dict[str, str] = {}
    for model in models:
        if isinstance(model, TextMessageStartEvent):
            assert model.message_id not in texts, "a message id was started twice"
            open_ids.add(model.message_id)
            texts[model.message_id] = ""
        elif isinstance(model, TextMessageContentEvent):
            assert model.message_id in open_ids, "content outside its message"
            texts[model.message_id] += model.delta
        elif isinstance(model, TextMessageEndEvent):
            assert model.message_id in open_ids, "end without a start"
            open_ids.remove(model.message_id)
    assert open_ids == set(), "a text message was never ended"
    return texts


def check_tool_calls(models: list[BaseModel]) -> dict[str, dict[str, Any]]:
    """START → ARGS… → END → CUSTOM approval → RESULT, per toolCallId. Returns per id:
    name, arguments text, approval value, result content, start metadata."""
    calls: dict[str, dict[str, Any]] = {}
    for position, model in enumerate(models):
        if isinstance(model, ToolCallStartEvent):
            assert model.tool_call_id not in calls, "a tool call id was started twice"
            calls[model.tool_call_id] = {
                "name": model.tool_call_name,
                "start": position,
                "args": "",
                "arg_positions": [],
                "metadata": model.metadata,
            }
        elif isinstance(model, ToolCallArgsEvent):
            call = calls[model.tool_call_id]
            assert "end" not in call, "arguments after the end"
            call["args"] += model.delta
            call["arg_positions"].append(position)
        elif isinstance(model, ToolCallEndEvent):
            call = calls[model.tool_call_id]
            assert "end" not in call, "ended twice"
            call["end"] = position
        elif isinstance(model, CustomEvent) and model.name == "approval":
            call = calls[model.value["toolCallId"]]
            assert "end" in call, "approval before the arguments were complete"
            call["approval"] = model.value
            call["approval_at"] = position
        elif isinstance(model, ToolCallResultEvent):
            call = calls[model.tool_call_id]
            assert "result" not in call, "two results for one call"
            call["result"] = model.content
            call["result_at"] = position
    for call_id, call in calls.items():
        assert call["arg_positions"], f"{call_id}: no TOOL_CALL_ARGS"
        assert "end" in call, f"{call_id}: no TOOL_CALL_END"
        assert all(call["start"] < p < call["end"] for p in call["arg_positions"])
        assert "result" in call, f"{call_id}: no TOOL_CALL_RESULT"
        assert call["end"] < call["result_at"]
        assert "approval" in call, f"{call_id}: no CUSTOM approval event"
        assert call["approval_at"] < call["result_at"]
        assert (call["metadata"] or {}).get("provider") == "openai", call["metadata"]
    return calls


def test_jsonl_run_with_text_and_tool_calls(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(
        Reply.tool_calls(
            [
                {"id": "call_r", "name": "read_file", "arguments": {"path": "README.md"}},
                {"id": "call_n", "name": "read_file", "arguments": {"path": "notes.txt"}},
            ],
            text_before=["Let me ", "check."],
            style="parallel_interleaved",
            fragment=4,
            usage=(11, 3),
        ),
        Reply.text(["All ", "done."], usage=(20, 2)),
    )
    result = run_cli(["run", "--output", "jsonl", "read both"], server=server)

    assert result.returncode == 0, result.stderr
    assert [line for line in result.stderr.splitlines() if "error" in line.lower()] == []
    events = parse_and_validate(result.stdout)
    check_run_structure(events, RunFinishedEvent)
    models = [model for _, model in events]

    started, finished = models[0], models[-1]
    assert isinstance(started, RunStartedEvent) and isinstance(finished, RunFinishedEvent)
    assert started.thread_id == finished.thread_id
    assert started.run_id == finished.run_id
    assert finished.outcome is None or finished.outcome.type == "success"

    texts = check_text_messages(models)
    assert sorted(texts.values()) == ["All done.", "Let me check."]

    calls = check_tool_calls(models)
    assert list(calls) == ["call_r", "call_n"]
    assert [c["name"] for c in calls.values()] == ["read_file", "read_file"]
    assert json.loads(calls["call_r"]["args"]) == {"path": "README.md"}
    assert json.loads(calls["call_n"]["args"]) == {"path": "notes.txt"}
    assert numbered(README_LINES) in calls["call_r"]["result"]
    assert numbered(NOTES_LINES) in calls["call_n"]["result"]
    for call in calls.values():
        assert call["approval"]["decision"] == "allow"
        assert call["approval"]["tool"] == "read_file"

    # The text after the tool results starts after the last result.
    last_result = max(c["result_at"] for c in calls.values())
    final_start = [
        i
        for i, m in enumerate(models)
        if isinstance(m, TextMessageStartEvent) and texts[m.message_id] == "All done."
    ]
    assert final_start and final_start[0] > last_result

    if finished.usage:
        assert sum(u.input_tokens or 0 for u in finished.usage) == 31
        assert sum(u.output_tokens or 0 for u in finished.usage) == 5

    # What went to the model matches what the stream reported.
    assert len(server.requests) == 2
    sent = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in sent] == ["call_r", "call_n"]


def test_jsonl_denied_call(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(
        Reply.tool_calls([{"id": "call_o", "name": "read_file", "arguments": {"path": "../x"}}]),
        Reply.text(["Could not read it."]),
    )
    result = run_cli(["run", "-o", "jsonl", "read outside"], server=server)

    assert result.returncode == 4, result.stderr
    events = parse_and_validate(result.stdout)
    check_run_structure(events, RunFinishedEvent)
    models = [model for _, model in events]
    calls = check_tool_calls(models)
    approval = calls["call_o"]["approval"]
    assert approval["decision"] == "deny"
    assert "denied" in calls["call_o"]["result"].lower()
    [result_event] = _of(events, ToolCallResultEvent)
    assert (result_event.metadata or {}).get("error")
    assert check_text_messages(models) == {
        m.message_id: "Could not read it." for m in _of(events, TextMessageStartEvent)
    }
    # the hint for the person goes to stderr, never into the event stream; beyond the
    # boundary it names --add-dir (a place a person adds), not --yes
    assert any(
        line.startswith("agentcli: denied") and "--add-dir" in line
        for line in result.stderr.splitlines()
    )


@pytest.mark.parametrize(
    ("reply", "flags", "needle", "code"),
    [
        (Reply.error(401, "invalid api key"), [], "OPENAI_API_KEY", 1),
        (Reply.cut(["Partial"]), [], "", 1),
        (
            Reply.tool_calls([{"name": "read_file", "arguments": {"path": "README.md"}}]),
            ["--max-steps", "1"],
            "--max-steps",
            3,
        ),
    ],
    ids=["401", "cut", "max-steps"],
)
def test_jsonl_failing_run_ends_with_run_error(
    run_cli: RunCli,
    server: ScriptedServer,
    reply: Reply,
    flags: list[str],
    needle: str,
    code: int,
) -> None:
    server.enqueue(reply)
    result = run_cli(["run", "--output", "jsonl", *flags, "hi"], server=server)

    assert result.returncode == code
    line = assert_one_error(result, needle)
    events = parse_and_validate(result.stdout)
    check_run_structure(events, RunErrorEvent)
    error = events[-1][1]
    assert isinstance(error, RunErrorEvent)
    assert error.message
    assert error.message in line
    assert _of(events, RunFinishedEvent) == []
    assert EventType(events[-1][0]["type"]) is EventType.RUN_ERROR
    assert len(server.requests) == 1


def test_jsonl_interrupted_run_ends_with_a_terminal_event(
    start_cli: StartCli, server: ScriptedServer
) -> None:
    server.enqueue(Reply.hang(10))
    process = start_cli(["run", "--output", "jsonl", "hi"], server=server)
    assert server.wait_for_requests(1, timeout=10)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=5)

    assert process.returncode == 130, err
    assert "Traceback" not in err
    events = parse_and_validate(out)
    last = events[-1][1]
    assert isinstance(last, RunFinishedEvent | RunErrorEvent)
    check_run_structure(events, type(last))
    if isinstance(last, RunFinishedEvent):
        assert last.outcome is not None and last.outcome.type == "cancelled"
