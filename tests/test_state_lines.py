"""agentcli.output.state_lines: a remote agent's state changes drawn at most one each
EVERY seconds (a clock given, so no test waits), the latest one held back drawn later
saying how many it stands for."""

from __future__ import annotations

from agentcli.conversation import events as ev
from agentcli.output.state_lines import EVERY, StateLines


def delta(n: int) -> ev.StateDelta:
    return ev.StateDelta(delta=[{"op": "replace", "path": f"/n{n}", "value": n}])


def test_changes_within_the_interval_are_held_and_the_latest_is_released_with_a_count():
    now = [0.0]
    lines = StateLines(clock=lambda: now[0])
    assert lines.take(delta(1)) is not None  # the first is drawn at once
    assert [lines.take(delta(n)) for n in (2, 3, 4)] == [None, None, None]
    held = lines.release()
    assert held is not None and "/n4" in held and "(and 2 earlier change(s) not shown)" in held
    assert lines.release() is None


def test_a_change_after_the_interval_is_drawn_at_once():
    now = [0.0]
    lines = StateLines(clock=lambda: now[0])
    lines.take(delta(1))
    now[0] += EVERY
    line = lines.take(delta(2))
    assert line is not None and "/n2" in line and "not shown" not in line
    assert lines.release() is None
