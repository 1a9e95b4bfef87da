"""`/add-dir DIR[:ro]` in the REPL, on a pseudo-terminal against the scripted model: from the
next call the file tools and commands (under Landlock alone and under bubblewrap) reach the
place, read-only when `:ro`; agentcli's own directories, a file and a missing directory are
refused in one line; `/status` lists the places; Tab completes the directory; MCP servers
(tests/fixtures/mcp/client_features_server.py) hear roots/list_changed and list the new
roots."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests import test_repl
from tests.conftest import tool_results, use_backend
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_boundary import BACKENDS
from tests.test_mcp import toml_str
from tests.test_repl import StartChat

chat = test_repl.chat  # the fixture: `agentcli chat` in a pseudo-terminal

SHARED_LINE = "shared line from beside the workspace"
FEATURES = Path(__file__).parent / "fixtures" / "mcp" / "client_features_server.py"


def read(call_id: str, path: Path) -> dict[str, Any]:
    return {"id": call_id, "name": "read_file", "arguments": {"path": str(path)}}


def shell(call_id: str, command: str) -> dict[str, Any]:
    return {"id": call_id, "name": "run_shell", "arguments": {"command": command}}


def search(call_id: str, path: Path) -> dict[str, Any]:
    arguments = {"pattern": "shared line", "path": str(path)}
    return {"id": call_id, "name": "search_content", "arguments": arguments}


def write(call_id: str, path: Path) -> dict[str, Any]:
    arguments = {"path": str(path), "content": "written\n"}
    return {"id": call_id, "name": "write_file", "arguments": arguments}


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    place = tmp_path / "shared"
    place.mkdir()
    (place / "data.txt").write_text(SHARED_LINE + "\n")
    return place


def one_line(screen: str, text: str) -> str:
    """The one line of `screen` that holds `text`, unwrapped."""
    joined = " ".join(screen.split())
    assert text in joined, screen
    return joined


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_place_added_mid_session_is_reached_by_every_tool_from_the_next_call(
    chat: StartChat, server: ScriptedServer, cli_home: Path, shared: Path, backend: str
) -> None:
    use_backend(cli_home, backend)
    data = shared / "data.txt"
    # A path no rule can see: the OS sandbox alone decides (--yes runs it confined).
    hidden = f"cat \"$(printf '%s/%s' {shared.parent} {shared.name})/data.txt\""
    server.enqueue(
        Reply.tool_calls(
            [
                read("r1", data),
                shell("s1", f"cat {data}"),
                shell("h1", hidden),
                write("w1", shared / "a"),
                search("g1", shared),
            ]
        ),
        Reply.text(["tried"]),
        Reply.tool_calls(
            [
                read("r2", data),
                shell("s2", f"cat {data}"),
                shell("h2", hidden),
                write("w2", shared / "b"),
                search("g2", shared),
            ]
        ),
        Reply.text(["read it"]),
        Reply.tool_calls(
            [
                write("w3", shared / "c"),
                shell("s3", f"echo x > {shared}/d"),
                shell("h3", f"echo x > \"$(printf '%s/%s' {shared.parent} {shared.name})/e\""),
            ]
        ),
        Reply.text(["tried to write"]),
    )
    session = chat("--yes")
    session.turn("before")
    before = tool_results(server)
    assert not [c for c in ("r1", "s1", "h1", "w1", "g1") if SHARED_LINE in before[c]], before
    assert not (shared / "a").exists()

    said = session.command(f"/add-dir {shared}", "added ")
    assert f"added {shared} (read-write)" in one_line(said, "every tool reaches it")
    session.turn("after")
    after = tool_results(server)
    assert all(SHARED_LINE in after[call] for call in ("r2", "s2", "h2", "g2")), after
    assert (shared / "b").read_text() == "written\n"

    said = session.command(f"/add-dir {shared}:ro", "added ")
    assert f"added {shared} (read-only, was read-write)" in one_line(said, "added")
    session.turn("read-only now")
    assert not [name for name in "cde" if (shared / name).exists()], tool_results(server)

    status = session.command("/status", "session ")
    assert f"places {shared} (read-only)" in " ".join(status.split()), status


def test_agentcli_s_own_directories_a_file_and_nothing_are_refused_in_one_line(
    chat: StartChat, server: ScriptedServer, cli_home: Path, shared: Path, workspace: Path
) -> None:
    own = cli_home / "agentcli"
    (own / "data").mkdir(parents=True)
    session = chat()
    refusals = {
        str(own): "holds agentcli's own configuration or data",
        str(own / "data"): "is inside agentcli's own configuration or data",
        str(cli_home): "holds agentcli's own configuration or data",  # AGENTCLI_HOME in it
        str(shared / "data.txt"): "is a file, not a directory",
        str(shared / "missing"): "is not a directory: nothing is there",
        str(workspace / "README.md"): "is a file",
        str(workspace): "is in the workspace",
        "": "name a directory: /add-dir DIR",
    }
    for path, why in refusals.items():
        screen = session.command(f"/add-dir {path}".rstrip(), why)
        errors = [line for line in screen.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1, screen  # one line (unwrapped at 120 columns)
    status = session.command("/status", "session ")
    assert "places none besides the workspace" in " ".join(status.split()), status
    assert "Traceback" not in session.screen()


def test_tab_completes_the_directory_after_add_dir(
    chat: StartChat, server: ScriptedServer, shared: Path
) -> None:
    (shared / "deeper-folder").mkdir()
    session = chat()
    mark = session.mark()
    session.send(f"/add-dir {shared}/dee")
    session.expect("deeper-folder/")  # the completion menu
    session.send("\t")
    session.submit("")
    session.expect("added ")
    said = session.screen(mark)
    assert f"added {shared}/deeper-folder" in " ".join(said.split()), said


def test_mcp_servers_hear_the_new_roots(
    chat: StartChat, server: ScriptedServer, cli_home: Path, shared: Path, workspace: Path
) -> None:
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f"[mcp.servers.f]\ncommand = {toml_str(sys.executable)}\n"
        f"args = [{toml_str(str(FEATURES))}]\n"
    )

    def ask(call_id: str, tool: str) -> dict[str, Any]:
        return {"id": call_id, "name": f"mcp__f__{tool}", "arguments": {}}

    server.enqueue(
        Reply.tool_calls([ask("c0", "roots_changed")]),
        Reply.tool_calls([ask("l0", "roots")]),
        Reply.text(["before"]),
        Reply.tool_calls([ask("l1", "roots")]),
        Reply.tool_calls([ask("c1", "roots_changed")]),
        Reply.text(["after"]),
    )
    session = chat("--allow", "mcp__f__*")
    session.turn("roots?")
    said = session.command(f"/add-dir {shared}:ro", "added ")
    assert "told 1 MCP server" in " ".join(said.split()), said
    session.turn("roots now?")
    got = tool_results(server)
    assert got["c0"] == "roots changed 0 times", got
    assert got["l0"].splitlines() == [workspace.as_uri()], got
    assert got["l1"].splitlines() == [workspace.as_uri(), shared.as_uri()], got
    assert got["c1"] == "roots changed 1 times", got
