"""The OpenAI chunk accumulator against every server deviation in protocols.md §1."""

from __future__ import annotations

import json

from agentcli.conversation import events as ev
from agentcli.conversation.messages import TurnCollector
from agentcli.providers.openai_stream import ChatStreamAccumulator, completion_as_chunk


def chunk(delta: dict | None = None, finish: str | None = None, **extra) -> dict:
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {"object": "chat.completion.chunk", "choices": [choice], **extra}


def play(chunks: list[dict]) -> tuple[list[ev.Event], ChatStreamAccumulator]:
    acc = ChatStreamAccumulator("openai", "m")
    out: list[ev.Event] = []
    for c in chunks:
        out.extend(acc.feed(c))
    out.extend(acc.finish())
    return out, acc


def calls_of(events: list[ev.Event]) -> list[tuple[str, str, str]]:
    collector = TurnCollector()
    for e in events:
        collector.feed(e)
    return [(c.id, c.name, c.arguments) for c in collector.message().tool_calls]


def test_text_in_pieces_opens_and_closes_one_message():
    events, acc = play(
        [
            chunk({"role": "assistant", "content": "Hel"}),
            chunk({"content": "lo"}),
            chunk(finish="stop"),
        ]
    )
    kinds = [e.type for e in events]
    assert kinds == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
    ]
    assert "".join(e.delta for e in events if isinstance(e, ev.TextMessageContent)) == "Hello"
    assert acc.finish_reason == "stop"


def test_canonical_fragments_are_joined_and_start_precedes_args():
    events, acc = play(
        [
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": ""},
                        }
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"pa'}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'th": "x"}'}}]}),
            chunk(finish="tool_calls"),
        ]
    )
    assert [e.type for e in events] == [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
    ]
    assert calls_of(events) == [("call_a", "read_file", '{"path": "x"}')]
    assert events[0].metadata == {"provider": "openai", "model": "m"}
    assert acc.finish_reason == "tool_calls"


def test_ollama_reuses_index_zero_with_distinct_ids_and_finishes_with_stop():
    events, acc = play(
        [
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}
                    ]
                }
            ),
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "b", "function": {"name": "g", "arguments": "{}"}}
                    ]
                }
            ),
            chunk(finish="stop"),
        ]
    )
    assert calls_of(events) == [("a", "f", "{}"), ("b", "g", "{}")]
    assert acc.finish_reason == "tool_calls"


def test_calls_without_index_are_told_apart_by_id():
    events, _ = play(
        [
            chunk(
                {"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": '{"x": 1}'}}]}
            ),
            chunk(
                {"tool_calls": [{"id": "b", "function": {"name": "f", "arguments": '{"x": 2}'}}]}
            ),
            chunk(finish="stop"),
        ]
    )
    assert calls_of(events) == [("a", "f", '{"x": 1}'), ("b", "f", '{"x": 2}')]


def test_arguments_sent_as_an_object_are_serialised():
    events, _ = play(
        [
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "a",
                            "function": {"name": "f", "arguments": {"path": "ü"}},
                        }
                    ]
                }
            ),
            chunk(finish="tool_calls"),
        ]
    )
    assert json.loads(calls_of(events)[0][2]) == {"path": "ü"}


def test_missing_ids_are_generated_and_missing_arguments_stay_empty():
    events, _ = play(
        [
            chunk({"tool_calls": [{"index": 0, "function": {"name": "f"}}]}),
            chunk({"tool_calls": [{"index": 1, "function": {"name": "g", "arguments": ""}}]}),
            chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"a": 1}'}}]}),
            chunk(finish="tool_calls"),
        ]
    )
    calls = calls_of(events)
    assert [c[1:] for c in calls] == [("f", ""), ("g", '{"a": 1}')]
    assert calls[0][0].startswith("call_") and calls[0][0] != calls[1][0]


def test_parallel_interleaved_fragments_go_to_their_own_call():
    events, _ = play(
        [
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "a", "function": {"name": "f", "arguments": ""}}
                    ]
                }
            ),
            chunk(
                {
                    "tool_calls": [
                        {"index": 1, "id": "b", "function": {"name": "f", "arguments": ""}}
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"n":'}}]}),
            chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"n":'}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": "0}"}}]}),
            chunk({"tool_calls": [{"index": 1, "function": {"arguments": "1}"}}]}),
            chunk(finish="tool_calls"),
        ]
    )
    assert calls_of(events) == [("a", "f", '{"n":0}'), ("b", "f", '{"n":1}')]


def test_text_before_a_call_is_closed_before_the_call_starts():
    events, _ = play(
        [
            chunk({"content": "Let me look."}),
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}
                    ]
                }
            ),
            chunk(finish="tool_calls"),
        ]
    )
    kinds = [e.type for e in events]
    assert kinds.index("TEXT_MESSAGE_END") < kinds.index("TOOL_CALL_START")


def test_usage_chunk_with_empty_choices_is_recorded():
    _, acc = play(
        [
            chunk({"content": "x"}),
            chunk(finish="stop"),
            {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3}},
        ]
    )
    assert acc.usage is not None
    assert (acc.usage.input_tokens, acc.usage.output_tokens, acc.usage.total_tokens) == (7, 3, 10)


def test_other_choice_indexes_are_ignored():
    events, _ = play(
        [
            {"choices": [{"index": 1, "delta": {"content": "no"}}]},
            chunk({"content": "yes"}),
            chunk(finish="stop"),
        ]
    )
    assert [e.delta for e in events if isinstance(e, ev.TextMessageContent)] == ["yes"]


def completion(message: dict, finish: str | None = "stop", **extra) -> dict:
    choice = {"index": 0, "message": message, "finish_reason": finish}
    return {"object": "chat.completion", "choices": [choice], **extra}


def test_a_whole_answer_becomes_the_events_of_a_stream():
    whole = completion(
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path":"a"}'},
                },
                {
                    "id": "c2",
                    "type": "function",  # Ollama style: an object, and index 0 again
                    "function": {"name": "list_dir", "arguments": {"path": "."}},
                    "index": 0,
                },
            ],
        },
        finish="stop",
        usage={"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13},
    )
    events, acc = play([completion_as_chunk(whole)])

    assert [type(e).__name__ for e in events][:3] == [
        "TextMessageStart",
        "TextMessageContent",
        "TextMessageEnd",
    ]
    assert calls_of(events) == [
        ("c1", "read_file", '{"path":"a"}'),
        ("c2", "list_dir", '{"path": "."}'),
    ]
    assert acc.finish_reason == "tool_calls"  # calls seen: `stop` means tool_calls
    assert (acc.usage.input_tokens, acc.usage.output_tokens) == (9, 4)
    assert acc.began


def test_a_legacy_function_call_and_an_empty_answer():
    legacy = completion(
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "read_file", "arguments": '{"path":"b"}'},
        },
        finish="function_call",
    )
    events, _ = play([completion_as_chunk(legacy)])
    [(_, name, arguments)] = calls_of(events)
    assert (name, arguments) == ("read_file", '{"path":"b"}')

    events, acc = play([completion_as_chunk(completion({"role": "assistant", "content": ""}))])
    assert events == [] and not acc.began and acc.finish_reason == "stop"


def test_a_role_chunk_alone_has_not_begun_the_answer():
    _, acc = play([chunk({"role": "assistant"}), chunk({"content": ""})])
    assert not acc.began
