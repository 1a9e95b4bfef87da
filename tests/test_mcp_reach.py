"""agentcli.mcp.reach on its own: which failures the sandbox explains, and the one line
each gets (the end-to-end tests drive real servers through the CLI: test_e2e_mcp_reach)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.mcp.config import parse_server
from agentcli.mcp.reach import Reach, add_suggestions, call_hint, start_hint


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    found = {name: tmp_path / name for name in ("ws", "hidden", "home", "system")}
    for path in found.values():
        path.mkdir()
    (found["ws"] / ".git" / "hooks").mkdir(parents=True)
    (found["hidden"] / "data.txt").write_text("x")
    (found["home"] / ".ssh").mkdir()
    (found["home"] / ".ssh" / "id_ed25519").write_text("k")
    return found


def reach(places: dict[str, Path], profile: str = "read-only", network: bool = False) -> Reach:
    ws = str(places["ws"])
    write = (ws,) if profile != "read-only" else ()
    hooks = (str(places["ws"] / ".git" / "hooks"),) if write else ()
    return Reach(
        profile, (str(places["system"]), ws), write, hooks, network, ws, str(places["home"])
    )


SERVER = parse_server("srv", {"command": "srv-bin", "args": ["--flag"]})


def test_no_network_names_the_network_profile(places: dict[str, Path]) -> None:
    text = "Failed to fetch https://example.com due to a connection issue"
    said = call_hint(SERVER, reach(places), text, {}, str(places["ws"]))
    assert 'mcp.servers.srv.sandbox = "network"' in said
    assert "agentcli mcp add srv --sandbox network -- srv-bin --flag" in said
    assert call_hint(SERVER, reach(places, "network", True), text, {}, "/") == ""


def test_a_refused_connect_is_the_network_not_a_write(places: dict[str, Path]) -> None:
    text = "connect EACCES 127.0.0.1:8080"
    assert '.sandbox = "network"' in call_hint(SERVER, reach(places), text, {}, "/")


def test_a_hidden_path_names_dirs(places: dict[str, Path]) -> None:
    data = places["hidden"] / "data.txt"
    said = call_hint(SERVER, reach(places), f"ENOENT: open '{data}'", {}, "/")
    assert f'mcp.servers.srv.dirs = ["{places["hidden"]}:ro"]' in said
    # A path the server names without any errno, there on the host: still the sandbox.
    said = call_hint(SERVER, reach(places), "error", {"path": str(data)}, "/")
    assert f'dirs = ["{places["hidden"]}:ro"]' in said


def test_a_file_being_made_in_a_hidden_directory_names_it_read_write(
    places: dict[str, Path],
) -> None:
    new = places["hidden"] / "new.tmp"
    said = call_hint(SERVER, reach(places), f"EACCES: permission denied, open '{new}'", {}, "/")
    assert f'dirs = ["{places["hidden"]}"]' in said


def test_writing_the_workspace_read_only_names_workspace_write(places: dict[str, Path]) -> None:
    target = places["ws"] / "out.txt"
    said = call_hint(SERVER, reach(places), f"EROFS: read-only file system, '{target}'", {}, "/")
    assert '.sandbox = "workspace-write"' in said
    writing = reach(places, "workspace-write")
    assert call_hint(SERVER, writing, f"EROFS: '{target}'", {}, "/") == ""  # not the sandbox's


def test_a_protected_path_is_never_offered(places: dict[str, Path]) -> None:
    hook = places["ws"] / ".git" / "hooks" / "pre-commit"
    said = call_hint(SERVER, reach(places, "workspace-write"), f"EACCES '{hook}'", {}, "/")
    assert "no sandboxed server writes" in said and "sandbox =" not in said


def test_a_place_of_secrets_is_never_offered(places: dict[str, Path]) -> None:
    key = places["home"] / ".ssh" / "id_ed25519"
    said = call_hint(SERVER, reach(places), f"ENOENT '{key}'", {}, "/")
    assert "keeps" in said and "dirs =" not in said


def test_an_error_the_sandbox_does_not_explain_gets_no_line(places: dict[str, Path]) -> None:
    missing = places["ws"] / "no-such-file"
    assert call_hint(SERVER, reach(places), f"ENOENT: '{missing}'", {}, "/") == ""
    assert call_hint(SERVER, reach(places), "invalid arguments: x must be int", {}, "/") == ""
    assert call_hint(SERVER, None, "connection refused", {}, "/") == ""  # unconfined


def test_a_table_mcp_add_cannot_write_whole_gets_config_set(places: dict[str, Path]) -> None:
    server = parse_server("srv", {"command": "srv-bin", "cwd": "sub"})
    said = call_hint(server, reach(places), "ECONNREFUSED", {}, "/")
    assert "agentcli config set mcp.servers.srv.sandbox network" in said


def test_a_launcher_that_cannot_start_needs_the_network_and_its_cache(
    places: dict[str, Path],
) -> None:
    npx = parse_server("files", {"command": "npx", "args": ["-y", "pkg"]})
    said = start_hint(npx, reach(places), "no answer within 30 s", "/")
    assert '.sandbox = "network"' in said and '.dirs = ["~/.npm"]' in said
    [line] = add_suggestions(npx)
    assert line.startswith("suggestion:") and "--sandbox network --dir '~/.npm'" in line
    assert add_suggestions(SERVER) == []
    assert "openWorldHint: fetch" in add_suggestions(SERVER, ["fetch"])[0]
