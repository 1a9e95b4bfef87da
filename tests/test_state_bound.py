"""limits.state as agentcli.agui.state.apply_bounded applies it: a patch within the limit
gives what jsonpatch gives; one past it is refused before its result is built."""

from __future__ import annotations

import jsonpatch
import pytest

from agentcli.agui.state import DEFAULT_LIMIT, StateTooLarge, apply_bounded, json_size
from agentcli.config.schema import SETTINGS

CASES = [
    ({"a": [1, 2]}, [{"op": "add", "path": "/a/-", "value": 3}]),
    ({"a": {"b": "x"}}, [{"op": "copy", "from": "/a", "path": "/c"}]),
    (
        {"a": 1},
        [{"op": "move", "from": "/a", "path": "/b"}, {"op": "test", "path": "/b", "value": 1}],
    ),
    (
        {"a": "é" * 10},
        [{"op": "replace", "path": "/a", "value": "ü"}, {"op": "remove", "path": "/a"}],
    ),
    ({}, [{"op": "add", "path": "", "value": {"new": True}}]),
]


@pytest.mark.parametrize(("state", "patch"), CASES)
def test_within_the_limit_it_is_jsonpatch(state, patch):
    result, size = apply_bounded(state, patch, DEFAULT_LIMIT)
    assert result == jsonpatch.apply_patch(state, patch)
    assert size == json_size(result)


def test_doubling_copies_stop_at_the_limit_and_the_state_is_unchanged():
    state = {"s": "x" * 40}
    patch = [{"op": "copy", "from": "", "path": f"/c{i}"} for i in range(20)]
    with pytest.raises(StateTooLarge, match=r"operation 1[0-9] would take the state past"):
        apply_bounded(state, patch, 1_000_000)
    assert state == {"s": "x" * 40}


def test_replacing_a_large_part_is_not_refused_by_the_estimate():
    state = {"big": "a" * 900}
    patch = [{"op": "replace", "path": "/big", "value": "b" * 900} for _ in range(3)]
    result, _ = apply_bounded(state, patch, 1_000)
    assert result == {"big": "b" * 900}


def test_the_default_is_the_settings():
    assert SETTINGS["limits.state"].default == DEFAULT_LIMIT


def test_a_remote_agents_state_delta_is_bounded_too() -> None:
    """`--agent`: a STATE_DELTA from the remote that would multiply its state is refused as
    the model's patches are, and the run ends on it (a StateError) with the state as it was."""
    import pytest

    from agentcli.agui.state import StateError
    from agentcli.agui.thread_view import ThreadView

    view = ThreadView([], {"a": "x" * 1000})
    view.state_limit = 50_000
    doubling = [{"op": "copy", "from": "", "path": f"/c{i}"} for i in range(20)]
    with pytest.raises(StateError):
        view.apply({"type": "STATE_DELTA", "delta": doubling})
    assert view.state == {"a": "x" * 1000}


def test_patches_that_nest_the_state_past_max_depth_are_refused_whole() -> None:
    """Each op's value is shallow, but adding each inside the last nests without a bound:
    a state past what the encoders take would fail every later run of its thread."""
    from agentcli.json_depth import MAX_DEPTH

    state: dict = {}
    path = ""
    for _ in range(MAX_DEPTH - 1):
        state, _ = apply_bounded(state, [{"op": "add", "path": path + "/a", "value": {}}], 10**6)
        path += "/a"
    with pytest.raises(StateTooLarge, match=f"deeper than {MAX_DEPTH} levels"):
        apply_bounded(state, [{"op": "add", "path": path + "/a", "value": {"b": {}}}], 10**6)
