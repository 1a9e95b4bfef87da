"""While an approval prompt owns the terminal, a running command's live line and other
calls' results wait for it to be answered (the renderers and the gate, real; the terminal
is a StringIO that says it is one)."""

from __future__ import annotations

import io
import weakref

import pytest

from agentcli.conversation import events as ev
from agentcli.output.text import TextOutput
from agentcli.ui.render import ReplRenderer
from agentcli.ui.screen import TerminalGate


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")


def progress(call: str, line: str) -> ev.Custom:
    return ev.Custom(name="progress", value={"toolCallId": call, "lines": [line]})


def result(call: str) -> ev.ToolCallResult:
    return ev.ToolCallResult(
        message_id="m", tool_call_id=call, content="done", metadata={"summary": "finished"}
    )


def start(call: str, name: str) -> list[ev.Event]:
    return [
        ev.ToolCallStart(tool_call_id=call, tool_call_name=name),
        ev.ToolCallArgs(tool_call_id=call, delta="{}"),
        ev.ToolCallEnd(tool_call_id=call),
    ]


@pytest.mark.parametrize("kind", ["repl", "run"])
def test_nothing_is_drawn_over_a_prompt_and_all_of_it_after(kind: str):
    terminal, screen = Terminal(), TerminalGate()  # the front end's: one per terminal
    if kind == "repl":
        renderer: ReplRenderer | TextOutput = ReplRenderer(terminal, screen)
    else:
        renderer = TextOutput(Terminal(), terminal, screen=screen)
    for event in start("c1", "run_shell"):
        renderer.handle(event)
    renderer.handle(progress("c1", "step 1"))
    assert terminal.getvalue().endswith("step 1")  # the live line, no newline after it

    screen.hold()  # the approval prompt of another call takes the terminal
    assert terminal.getvalue().endswith("\r\x1b[2K")  # the live line was taken off
    terminal.write("PROMPT")
    before = terminal.getvalue()
    for n in range(2, 200):
        renderer.handle(progress("c1", f"step {n}"))
    renderer.handle(result("c1"))
    assert terminal.getvalue() == before  # nothing drawn over the prompt

    screen.release()
    after = terminal.getvalue()[len(before) :]
    assert "step 199" in after and "step 2 " not in after  # progress coalesced
    assert after.index("step 199") < after.index("finished")  # in order


def test_holds_nest_and_a_gate_forgets_dead_renderers():
    gate = TerminalGate()
    drawn: list[int] = []
    gate.hold()
    gate.hold()
    assert gate.defer(lambda: drawn.append(1))
    gate.release()
    assert drawn == [] and gate.held
    gate.release()
    assert drawn == [1] and not gate.defer(lambda: drawn.append(2))

    gone, alive = ReplRenderer(Terminal()), ReplRenderer(Terminal())
    gate.on_hold(gone._clear_live_line)
    gate.on_hold(alive._clear_live_line)
    alive._show_live_line("running")
    gone_ref = weakref.ref(gone)
    del gone
    assert gone_ref() is None  # held weakly: the gate keeps no finished run's renderer
    gate.hold()
    assert alive.stream.getvalue().endswith("\r\x1b[2K")  # the live one was cleared
    assert not alive._live_line
    gate.release()


def test_a_prompt_holds_its_own_front_ends_terminal_only():
    from agentcli.ui.approval import TerminalApprover

    screen = TerminalGate()  # made by the front end, given to its renderer and approver
    approver = TerminalApprover(Terminal(), screen=screen)
    mine, elsewhere = ReplRenderer(Terminal(), screen), ReplRenderer(Terminal())
    for renderer in (mine, elsewhere):
        for event in start("c1", "run_shell"):
            renderer.handle(event)
    approver._take_terminal()
    mine.handle(progress("c1", "held back"))
    elsewhere.handle(progress("c1", "drawn at once"))
    assert "held back" not in mine.stream.getvalue()
    assert elsewhere.stream.getvalue().endswith("drawn at once")
    approver._give_back_terminal()
    assert mine.stream.getvalue().endswith("held back")
