"""serve validates each RunAgentInput with the SDK's model, but a thread's history that a
client sends again is not validated again (agentcli.agui.run_inputs): what it gives is
what the SDK gives for the whole request, and so are its errors."""

from __future__ import annotations

import copy

import pytest
from ag_ui.core import RunAgentInput
from pydantic import ValidationError

from agentcli.agui.run_inputs import RunInputs


def _body(thread: str, count: int) -> dict:
    messages = []
    for n in range(count):
        messages.append({"id": f"u{n}", "role": "user", "content": f"question {n}"})
        messages.append({"id": f"a{n}", "role": "assistant", "content": f"answer {n}"})
    return {
        "threadId": thread,
        "runId": f"r{count}",
        "state": None,
        "messages": messages,
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


def _errors(inputs: RunInputs, body: dict) -> list:
    with pytest.raises(ValidationError) as caught:
        inputs.validate(copy.deepcopy(body), 100)
    return caught.value.errors()


def test_a_growing_history_is_validated_once_and_gives_what_the_sdk_gives():
    inputs = RunInputs()
    for count in range(1, 30):
        body = _body("t", count)
        assert inputs.validate(copy.deepcopy(body), 100) == RunAgentInput.model_validate(body)
    assert inputs.validated == 2 * 29  # each run validated its two new messages


def test_an_edited_earlier_message_has_the_whole_request_validated():
    inputs = RunInputs()
    inputs.validate(_body("t", 10), 100)
    body = _body("t", 11)
    body["messages"][3]["content"] = "edited"
    assert inputs.validate(copy.deepcopy(body), 100) == RunAgentInput.model_validate(body)
    assert inputs.validated == 20 + 22


def test_a_wrong_new_message_is_the_error_the_sdk_gives_for_the_whole_request():
    inputs = RunInputs()
    inputs.validate(_body("t", 10), 100)
    body = _body("t", 11)
    body["messages"][-1]["content"] = 7
    with pytest.raises(ValidationError) as scratch:
        RunAgentInput.model_validate(body)
    assert _errors(inputs, body) == scratch.value.errors()
    assert scratch.value.errors()[0]["loc"][:2] == ("messages", 21)


def test_what_is_kept_is_bounded_by_the_bodies_sizes():
    inputs = RunInputs(kept_bytes=250)
    for thread in ("a", "b", "c"):
        inputs.validate(_body(thread, 5), 100)
    inputs.validate(_body("a", 6), 100)  # "a" was dropped: validated whole
    assert inputs.validated == 3 * 10 + 12
    inputs.validate(_body("c", 6), 100)  # "c" was kept
    assert inputs.validated == 3 * 10 + 12 + 2
    inputs.validate(_body("d", 1), 1000)  # too large to keep: nothing else is dropped
    inputs.validate(_body("c", 7), 100)
    assert inputs.validated == 3 * 10 + 12 + 2 + 2 + 2


def test_what_is_kept_is_bounded_by_the_number_of_threads_too():
    inputs = RunInputs(kept_threads=2)
    for thread in ("a", "b", "c"):
        inputs.validate(_body(thread, 5), 100)
    inputs.validate(_body("a", 6), 100)  # the oldest, "a", was dropped: validated whole
    assert inputs.validated == 3 * 10 + 12
    inputs.validate(_body("c", 6), 100)  # "c" was kept
    assert inputs.validated == 3 * 10 + 12 + 2


def test_a_thread_sent_again_counts_its_size_once():
    inputs = RunInputs(kept_bytes=250)
    for _ in range(5):  # 5 bodies of 100 bytes, all one thread's: only the last is kept
        inputs.validate(_body("a", 5), 100)
    inputs.validate(_body("b", 5), 100)
    inputs.validate(_body("a", 6), 100)  # "a" still kept beside "b": only the new ones
    assert inputs.validated == 10 + 4 * 0 + 10 + 2
