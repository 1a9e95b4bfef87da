"""End-to-end, in a pseudo-terminal against the scripted server: `/rewind` — the picker of
turns (prompt, when, files changed, the latest first), the choice of what to restore, what
it says it did, a conflict shown and overwritten only when chosen, Esc."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import test_repl
from tests.conftest import NOTES_LINES
from tests.scripted_server import Reply, ScriptedServer
from tests.test_repl import StartChat, lines_of, messages, write_call

chat = test_repl.chat  # the fixture: `agentcli chat` in a pseudo-terminal
DOWN = "\x1b[B"


def users(server: ScriptedServer) -> list[str]:
    last = len(server.requests) - 1
    return [m["content"] for m in messages(server, last) if m["role"] == "user"]


@pytest.mark.parametrize("columns", [40, 120])
def test_rewind_picks_a_turn_and_restores_files_and_conversation(
    chat: StartChat, server: ScriptedServer, workspace: Path, columns: int
) -> None:
    server.enqueue(
        Reply.tool_calls([write_call("w1", "notes.txt", "v1\n")]),
        Reply.text(["First done."]),
        Reply.tool_calls([write_call("w2", "new.txt", "brand new\n")]),
        Reply.text(["Second done."]),
        Reply.text(["After the rewind."]),
    )
    session = chat("--yes", columns=columns)
    session.turn("first change")
    session.turn("second change")
    assert (workspace / "new.txt").exists()

    mark = session.submit("/rewind")
    session.expect("Enter chooses")
    listing = [line for line in lines_of(session.screen(mark)) if "change" in line]
    session.send("\r")  # the latest turn, listed first
    session.expect("Enter restores")
    choices = lines_of(session.screen(mark))
    session.send("\r")  # files and conversation
    session.expect("the conversation is back to before turn 2")
    session.prompt()
    said = lines_of(session.screen(mark))

    assert listing[0].startswith("› 2.") and "1 file changed" in listing[0], listing
    assert any(line.startswith("1.") for line in listing), listing
    assert all(len(line) <= columns for line in listing), listing
    assert any("files and conversation" in line for line in choices), choices
    assert "removed (the turn made it): new.txt" in " ".join(said)  # after the erased picker
    assert not (workspace / "new.txt").exists()
    assert (workspace / "notes.txt").read_text() == "v1\n"  # the first turn's change stays
    session.turn("and now")
    assert users(server) == ["first change", "and now"]


def test_a_conflict_is_shown_and_overwritten_only_when_chosen(
    chat: StartChat, server: ScriptedServer, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    server.enqueue(
        Reply.tool_calls([write_call("w1", "notes.txt", "by agentcli\n")]), Reply.text(["Ok."])
    )
    session = chat("--yes")
    session.turn("change the notes")
    notes.write_text("by hand\n")

    mark = session.submit("/rewind")
    session.expect("Enter chooses")
    session.send("\r")
    session.expect("Enter restores")
    session.send(DOWN + DOWN + "\r")  # the files only
    session.expect("changed since agentcli's last change")
    session.expect("Enter chooses")
    session.send("\r")  # leave everything as it is
    session.expect("nothing was restored")
    session.prompt()
    assert "conflict: notes.txt changed since agentcli's last change" in " ".join(
        lines_of(session.screen(mark))
    )
    assert notes.read_text() == "by hand\n"

    session.submit("/rewind")
    session.expect("Enter chooses")
    session.send("\r")
    session.expect("Enter restores")
    session.send(DOWN + DOWN + "\r")
    session.expect("Enter chooses")
    session.send(DOWN + "\r")  # overwrite them too
    session.expect("1 file restored")
    session.prompt()
    assert notes.read_text() == "\n".join(NOTES_LINES) + "\n"


def test_rewind_esc_cancels_and_an_empty_conversation_has_nothing(
    chat: StartChat, server: ScriptedServer, workspace: Path
) -> None:
    session = chat()
    session.command("/rewind", "no turns to rewind yet")
    server.enqueue(Reply.text(["Hello."]))
    session.turn("hi")
    session.submit("/rewind")
    session.expect("Enter chooses")
    session.send("\x1b")
    session.expect("(cancelled)")
    session.prompt()
    server.enqueue(Reply.text(["Still here."]))
    session.turn("still")
    assert users(server) == ["hi", "still"]
