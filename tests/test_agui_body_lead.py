"""serve parses a request body from where its thread's last request left off
(agentcli.agui.body_lead, agentcli.agui.run_inputs): a history sent again byte for byte is
not parsed again, and what a request gives — its RunAgentInput, its 400 or 422 — is what
parsing and validating the whole body gives, for bodies built as clients build them and
for the unusual ones."""

from __future__ import annotations

import itertools
import json
import sys

import pytest
from ag_ui.core import RunAgentInput
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agentcli.agui.run_inputs import RunInputs
from agentcli.text.decoding import contents, loads

PIECES = ["\ud800", "\udfff", "\udcff", "\U0001f600", '"', "\\", "\n", "\x00", "é", "\u2028"]
CONTENT = st.lists(st.one_of(st.text(max_size=4), st.sampled_from(PIECES)), max_size=3).map("".join)
SPACE = st.sampled_from(["", "", " ", "\n  ", "\t", "\r\n"])
ODD = [  # what a request may do that a client's does not (most requests: none)
    "extra",
    "trailing",  # extra data after the object
    "bom",
    "thread after",  # a second threadId after the messages, another thread's
    "escaped key",  # "m\\u0065ssages"
    "state messages",  # a state of its own with a "messages" key, before the array
    "bad byte after",
    "not an object",
    "bad message",  # a 422
    "wrong thread",  # the body names another thread
    "dup messages",
    "dup runId",
    "bad byte",  # not UTF-8 before the array
    "cut",  # the body ends early
    "huge int",  # too many digits for int(): a ValueError from the decoder
    "deep",  # too deep for the parser
]


def _reference(body: bytes) -> tuple:
    """What today's path gives: the whole body parsed, then validated whole."""
    try:
        data = loads(contents(body))
    except ValueError as error:
        return ("400", str(error))
    try:
        run_input = RunAgentInput.model_validate(data)
    except ValidationError as error:
        return ("422", repr(error.errors()))
    return ("ok", repr(run_input.model_dump(by_alias=True)), repr(data))


def _served(inputs: RunInputs, body: bytes) -> tuple[tuple, int]:
    """What serve's parse_input does with `inputs`, and how many messages were known."""
    done = inputs.read(body)
    known = done.known if done is not None else 0
    try:
        data = done.data if done is not None else loads(contents(body))
    except ValueError as error:
        return ("400", str(error)), 0
    try:
        run_input = inputs.validate(data, len(body), done)
    except ValidationError as error:
        return ("422", repr(error.errors())), known
    return ("ok", repr(run_input.model_dump(by_alias=True)), repr(data)), known


def _message(draw, n: int) -> bytes:
    role = draw(st.sampled_from(["user", "assistant"]))
    message: dict = {"id": f"m{n}", "role": role, "content": draw(CONTENT)}
    if draw(st.booleans()):
        message = dict(reversed(list(message.items())))
    ascii_only = draw(st.integers(0, 5)) > 0  # not: a lone surrogate is bytes not UTF-8
    indent = draw(st.sampled_from([None, None, 1]))
    return json.dumps(message, ensure_ascii=ascii_only, indent=indent).encode(
        "utf-8",
        "surrogatepass",  # a lone surrogate not escaped: bytes that are not UTF-8
    )


def _other(thread: str) -> str:
    return "t-other" if thread != "t-other" else "t1"


def _body(draw, thread: str, run: int, elements: list[bytes], sep: bytes, odd: str) -> bytes:
    space = draw(SPACE).encode()
    other = _other(thread)
    array = b"[" + sep.lstrip(b",") + sep.join(elements) + b"]" if elements else b"[]"
    state: bytes = json.dumps({"n": run, "x": [float("nan"), 10**30]}).encode()
    members = [
        (b'"threadId"', json.dumps(other if odd == "wrong thread" else thread).encode()),
        (b'"runId"', b'"r\xff"' if odd == "bad byte" else f'"r{run}"'.encode()),
        (b'"tools"', b"[]"),
        (b'"context"', b'[{"description": "d\\u00e9", "value": "\\ud83d\\ude00"}]'),
        (b'"forwardedProps"', b'{"a": Infinity, "b": -0.0, "a": 1}'),
        (b'"state"', state),
        (b'"messages"', array),
    ]
    if odd == "state messages":
        members[5] = (b'"state"', b'{"messages": [' + b",".join(elements[:2]) + b"]}")
    if draw(st.integers(0, 3)) == 0:  # any key order; the client's is usually the one above
        members = draw(st.permutations(members))
    extras = {
        "thread after": (b'"threadId"', json.dumps(other).encode()),
        "dup messages": (b'"messages"', b"[]"),
        "escaped key": (b'"m\\u0065ssages"', array),
        "dup runId": (b'"runId"', b'"again"'),
        "bad byte after": (b'"resume"', b'"\xc3("'),
        "huge int": (b'"state"', b"9" * 5000),
        "deep": (b'"state"', b"[" * 5000 + b"]" * 5000),
        "bad message": (b'"messages"', array[:-1] + b',{"role": "user", "content": 7}]'),
        "extra": (b'"\\ud800x"', b'"\\udc80"'),
    }
    if odd in extras:
        members.append(extras[odd])
    colon = b":" + space if draw(st.booleans()) else space + b": "
    joined = (b"," + space).join(key + colon + value for key, value in members)
    body = space + b"{" + space + joined + space + b"}" + draw(SPACE).encode()
    if odd == "cut":
        body = body[: draw(st.integers(0, len(body) - 1))]
    elif odd == "not an object":
        body = b"[" + body + b"]"
    elif odd == "trailing":
        body += draw(st.sampled_from([b" {}", b"}", b"x", b","]))
    elif odd == "bom":
        body = b"\xef\xbb\xbf" + body
    return body


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_every_request_gives_what_parsing_and_validating_the_whole_body_gives(data):
    inputs = RunInputs()
    threads = {"t1": ([], b","), "t-other": ([], b",")}  # a client's history, its separator
    kept: dict[str, list[bytes] | None] = {}  # what a clean, valid request last sent
    count = 0
    for run in range(data.draw(st.integers(1, 10))):
        thread = data.draw(st.sampled_from(sorted(threads)))
        elements, sep = threads[thread]
        change = data.draw(st.sampled_from([*["grow"] * 5, "same", "edit", "cut"]))
        if change == "grow":
            for _ in range(data.draw(st.integers(1, 3))):
                elements = [*elements, _message(data.draw, count)]
                count += 1
        elif change == "edit" and elements:
            at = data.draw(st.integers(0, len(elements) - 1))
            elements = [*elements[:at], _message(data.draw, count), *elements[at + 1 :]]
            count += 1
        elif change == "cut":
            elements = elements[: data.draw(st.integers(0, len(elements)))]
        if data.draw(st.integers(0, 9)) == 0:
            sep = data.draw(st.sampled_from([b",", b", ", b",\n  "]))
        threads[thread] = (elements, sep)
        odd = data.draw(st.sampled_from(ODD)) if data.draw(st.integers(0, 3)) == 3 else ""
        body = _body(data.draw, thread, run, elements, sep, odd)
        outcome, known = _served(inputs, body)
        assert outcome == _reference(body), (odd, change, body)
        clean = (
            not odd and outcome[0] == "ok" and body.find(b'"threadId"') < body.find(b'"messages"')
        )
        clean = clean and contents(body).encode() == body  # UTF-8
        last = kept.get(thread)
        if clean and last and elements[: len(last)] == last and sep == kept[thread + "sep"]:
            assert known == len(last)  # the bytes sent again were not parsed again
        if outcome[0] == "ok":  # kept under the thread the body named last
            named = _other(thread) if odd in ("wrong thread", "thread after") else thread
            kept[named] = elements if clean else None
            kept[named + "sep"] = sep  # type: ignore[assignment]


@pytest.mark.parametrize("odd", ODD)
@settings(max_examples=8, deadline=None, derandomize=True)
@given(data=st.data())
def test_each_unusual_body_after_a_kept_lead_gives_what_the_whole_body_gives(odd, data):
    inputs = RunInputs()
    elements = [_message(data.draw, n) for n in range(3)]
    for run, upto in enumerate((2, 3)):
        body = _body(data.draw, "t1", run, elements[:upto], b",", "")
        assert _served(inputs, body)[0] == _reference(body)
    elements.append(_message(data.draw, 3))
    body = _body(data.draw, "t1", 2, elements, b",", odd)
    assert _served(inputs, body)[0] == _reference(body)


def _read(inputs: RunInputs, body: bytes):
    done = inputs.read(body)
    assert done is not None  # a client's body, read by body_lead
    return done


def test_a_body_nested_near_the_recursion_limit_is_refused_as_before():
    """body_lead parses values nested less deeply than json.loads does (not inside the top
    object): near the limit it must refuse (and leave the body to json.loads) first."""
    limit = sys.getrecursionlimit()
    deep = {}
    for depth in range(limit - 60, limit + 2):
        nested = b"[" * depth + b"]" * depth
        user = b'{"id": "u", "role": "user", "content": "x", "extra": ' + nested + b"}"
        runs = [  # a deep state; a deep new message, then one a new thread starts with
            (nested, (b"[" + USER, b"[" + USER)),
            (b"{}", (b"[" + USER, b"[" + USER + b"," + user)),
            (b"{}", (b"[" + user, b"[" + user + b"," + USER)),
        ]
        for state, bodies in runs:
            inputs = RunInputs()
            for run, messages in enumerate(bodies):
                body = b'{"threadId": "t", "runId": "r%d", "state": %s, "tools": [], ' % (
                    run,
                    state,
                )
                body += b'"context": [], "forwardedProps": {}, "messages": %s]}' % messages
                outcome = _served(inputs, body)[0]
                assert outcome == _reference(body), depth
                deep[outcome[0]] = depth
    assert set(deep) >= {"ok", "400"}  # both sides of the limit were tried


USER = b'{"id": "u0", "role": "user", "content": "hi"}'


def _history(count: int) -> list[dict]:
    return [
        {"id": f"m{n}", "role": "user" if n % 2 else "assistant", "content": f"é {n}"}
        for n in range(count)
    ]


def _client_body(thread: str, run: int, messages: list[dict]) -> bytes:
    """As @ag-ui/client's HttpAgent sends it: JSON.stringify, no spaces, this key order."""
    body = {
        "threadId": thread,
        "runId": f"r{run}",
        "tools": [],
        "context": [],
        "forwardedProps": {},
        "state": {},
        "messages": messages,
    }
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def test_a_growing_thread_parses_and_validates_only_its_new_messages():
    inputs = RunInputs()
    history = _history(40)
    for run, count in enumerate(range(10, 41, 10)):
        body = _client_body("t", run, history[:count])
        done = _read(inputs, body)
        assert done.data == json.loads(body)
        inputs.validate(done.data, len(body), done)
        assert done.known == (count - 10)
    assert inputs.parsed == 40  # each run parsed its 10 new messages
    assert inputs.validated == 40


def test_the_known_messages_are_the_very_objects_the_last_run_validated():
    inputs = RunInputs()
    history = _history(30)
    runs = []
    for run, count in enumerate((10, 20, 20, 30)):
        body = _client_body("t", run, history[:count])
        done = _read(inputs, body)
        runs.append(inputs.validate(done.data, len(body), done).messages)
    for before, after in itertools.pairwise(runs):
        assert all(a is b for a, b in zip(before, after, strict=False))
    assert [m.id for m in runs[-1]] == [m["id"] for m in history]
    assert inputs.validated == inputs.parsed == 30  # each message once


def test_a_body_another_thread_left_off_is_parsed_whole_where_it_differs():
    inputs = RunInputs()
    history = _history(20)
    for thread in ("a", "b"):
        body = _client_body(thread, 0, history[:10])
        done = _read(inputs, body)
        inputs.validate(done.data, len(body), done)
    edited = [*history[:3], {**history[3], "content": "edited"}, *history[4:12]]
    body = _client_body("a", 1, edited)
    done = _read(inputs, body)
    assert done.known == 0 and done.parsed == 12
    assert inputs.validate(done.data, len(body), done) == RunAgentInput.model_validate(
        json.loads(body)
    )
    body = _client_body("b", 1, history[:12])  # b's history, still kept as it was
    assert _read(inputs, body).known == 10
