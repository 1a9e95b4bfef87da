"""An answer the SDK cannot read ends the one call it must be for, and nothing else
(agentcli.mcp.flights); through a real server: tests/test_mcp_wrong_shapes.py."""

from __future__ import annotations

import pytest

from agentcli.mcp.flights import Flight, Flights, answer_like

pytest.importorskip("mcp")


def unreadable(raw: str) -> Exception:
    """The error the SDK hands over for a message it cannot read as JSON-RPC."""
    from mcp.types import jsonrpc_message_adapter

    try:
        jsonrpc_message_adapter.validate_json(raw, by_name=False)
    except Exception as error:
        return error
    raise AssertionError(f"{raw} is JSON-RPC")


ANSWERS = [
    '{"jsonrpc": "2.0", "result": {"content": []}}',
    '{"jsonrpc": "2.0", "id": [3], "result": {"content": []}}',
    '{"jsonrpc": "2.0", "id": 3, "error": "broken"}',
    '{"jsonrpc": "2.0", "id": 3, "result": null}',
]
NO_ANSWERS = [
    "5",
    "a stray line of output",
    '{"jsonrpc": "2.0", "method": "notifications/whatever", "params": 3}',
    '["result"]',
]


@pytest.mark.parametrize("raw", ANSWERS)
def test_an_unreadable_answer_ends_the_one_call_in_flight(raw: str) -> None:
    ended: list[str] = []
    kept = flights()
    flight = Flight(lambda: ended.append("now"))
    with kept.flying(flight):
        kept.unreadable(unreadable(raw), "quoted")
        kept.unreadable(unreadable(raw), "again")
    assert ended == ["now"] and flight.garbled == "quoted"  # once, with the first


@pytest.mark.parametrize("raw", NO_ANSWERS)
def test_what_is_no_answer_ends_nothing(raw: str) -> None:
    assert not answer_like(unreadable(raw))
    ended: list[str] = []
    kept = flights()
    flight = Flight(lambda: ended.append("now"))
    with kept.flying(flight):
        kept.unreadable(unreadable(raw), "quoted")
    assert ended == [] and flight.garbled is None


class Answered(Exception):
    """What a call raises when the server answered it with an error."""


def flights() -> Flights:
    return Flights(lambda error: isinstance(error, Answered))


def recorded(ended: list[str], name: str) -> Flight:
    return Flight(lambda: ended.append(name))


def test_with_several_in_flight_the_one_left_unanswered_ends_when_the_others_answer() -> None:
    ended: list[str] = []
    kept = flights()
    first, second, third = (recorded(ended, n) for n in "123")
    waits = [kept.flying(flight) for flight in (first, second, third)]
    for wait in waits:
        wait.__enter__()
    kept.unreadable(unreadable(ANSWERS[0]), "quoted")
    assert ended == []  # which one it answers cannot be told yet
    waits[2].__exit__(None, None, None)  # third answered
    assert ended == []
    later = kept.flying(recorded(ended, "later"))  # not in flight then: no suspect
    later.__enter__()
    later.__exit__(Answered, Answered(), None)  # an error the server sent is an answer too
    assert ended == []
    waits[1].__exit__(Answered, Answered(), None)  # second answered, with an error
    assert ended == ["1"] and first.garbled == "quoted"  # the one left, at once
    waits[0].__exit__(TimeoutError, TimeoutError(), None)  # as its ended call raises


def test_the_last_suspect_is_ended_at_once_not_when_it_leaves() -> None:
    ended: list[str] = []
    kept = flights()
    first, second = recorded(ended, "1"), recorded(ended, "2")
    with kept.flying(first):
        with kept.flying(second):
            kept.unreadable(unreadable(ANSWERS[0]), "quoted")
        assert ended == ["1"] and first.garbled == "quoted"  # while still in flight


def test_two_unreadable_answers_for_two_calls_end_both() -> None:
    ended: list[str] = []
    kept = flights()
    first, second = recorded(ended, "1"), recorded(ended, "2")
    with kept.flying(first), kept.flying(second):
        kept.unreadable(unreadable(ANSWERS[0]), "one")
        kept.unreadable(unreadable(ANSWERS[2]), "two")
        assert sorted(ended) == ["1", "2"]
    assert first.garbled == second.garbled == "one; two"


def test_a_suspect_leaving_without_an_answer_may_have_been_the_one() -> None:
    """Its timeout (or a cancel) says nothing of which call the answer was for: the other
    keeps its own limit, never ended for an answer that may have been another's."""
    ended: list[str] = []
    kept = flights()
    first, second = recorded(ended, "1"), recorded(ended, "2")
    with kept.flying(first):
        with pytest.raises(TimeoutError), kept.flying(second):
            kept.unreadable(unreadable(ANSWERS[0]), "quoted")
            raise TimeoutError
        assert ended == [] and first.garbled is None


def test_a_call_already_ended_is_no_suspect_of_the_next_unreadable_answer() -> None:
    ended: list[str] = []
    kept = flights()
    first, second = recorded(ended, "1"), recorded(ended, "2")
    with kept.flying(first):
        kept.unreadable(unreadable(ANSWERS[0]), "one")
        with kept.flying(second):
            kept.unreadable(unreadable(ANSWERS[1]), "two")
    assert ended == ["1", "2"] and second.garbled == "two"


def test_an_error_that_is_not_pydantics_is_no_answer() -> None:
    assert not answer_like(ValueError("no errors() here"))
