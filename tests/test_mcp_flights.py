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
    flights = Flights()
    flight = Flight(lambda: ended.append("now"))
    with flights.flying(flight):
        flights.unreadable(unreadable(raw), "quoted")
        flights.unreadable(unreadable(raw), "again")
    assert ended == ["now"] and flight.garbled == "quoted"  # once, with the first


@pytest.mark.parametrize("raw", NO_ANSWERS)
def test_what_is_no_answer_ends_nothing(raw: str) -> None:
    assert not answer_like(unreadable(raw))
    ended: list[str] = []
    flights = Flights()
    flight = Flight(lambda: ended.append("now"))
    with flights.flying(flight):
        flights.unreadable(unreadable(raw), "quoted")
    assert ended == [] and flight.garbled is None


def test_with_several_calls_in_flight_none_is_ended() -> None:
    """Which one it answers cannot be told: each keeps its own limit."""
    ended: list[str] = []
    flights = Flights()
    first, second = Flight(lambda: ended.append("1")), Flight(lambda: ended.append("2"))
    with flights.flying(first), flights.flying(second):
        flights.unreadable(unreadable(ANSWERS[0]), "quoted")
    assert ended == []
    with flights.flying(first):  # the other one answered: this one is told again
        flights.unreadable(unreadable(ANSWERS[0]), "quoted")
    assert ended == ["1"]


def test_an_error_that_is_not_pydantics_is_no_answer() -> None:
    assert not answer_like(ValueError("no errors() here"))
