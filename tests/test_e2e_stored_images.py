"""End-to-end: a session's stored images are read only by a run that sends them on.

`agentcli sessions show`, `list` and `export` describe each image by what the session
file records of it (type, size, hash) and never open its file: the kernel's own account
of opens and reads (tests/file_watch.py) says so, whatever is in the image's place — a
FIFO, a 2 GB sparse file, a directory, a link to /dev/zero. A `--continue` checks the
recorded size and `images.max_bytes` before it reads a byte, opens non-blocking, takes
regular files only: the run goes on with the image's description and one warning.

The subprocess timeouts here only end a hang; no verdict rests on how long anything took."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import RunCli
from tests.file_watch import Watch
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_images import config, png, read, session_id, wire

HANG = 120  # seconds: only a hang reaches it


def recorded(run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path) -> tuple:
    """A session whose one tool result has a stored PNG: (its id, the stored file)."""
    (workspace / "shot.png").write_bytes(png(21, padding=2000))
    server.enqueue(Reply.tool_calls([read("shot.png", "call_a")]), Reply.text(["ok"]))
    first = run_cli(["run", "look", "-o", "jsonl"], server=server)
    assert first.returncode == 0, first.stderr
    sid = session_id(first.stdout)
    [stored] = (cli_home / "agentcli" / "data" / "sessions" / f"{sid}.images").iterdir()
    return sid, stored


def replace(stored: Path, by: str) -> None:
    stored.unlink()
    if by == "a FIFO":
        os.mkfifo(stored)
    elif by == "a 2 GB sparse file":
        with stored.open("wb") as sparse:
            sparse.truncate(2 * 1024**3)
    elif by == "a directory":
        stored.mkdir()
    else:
        stored.symlink_to("/dev/zero")


def image_warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "stored images" in line]


def showing(run_cli: RunCli, sid: str, stored: Path) -> None:
    """show, list and both exports: each finishes, describes the image by its record, and
    opens no file of the images directory."""
    digest = stored.stem
    with Watch(stored.parent) as watch:
        shown = run_cli(["sessions", "show", sid], timeout=HANG)
        listed = run_cli(["sessions", "list"], timeout=HANG)
        exported = run_cli(["sessions", "export", sid, "--format", "json"], timeout=HANG)
        markdown = run_cli(["sessions", "export", sid, "--format", "markdown"], timeout=HANG)
        events = watch.events()
    for result in (shown, listed, exported, markdown):
        assert result.returncode == 0, result.stderr
        assert not image_warnings(result.stderr), result.stderr
    assert f"stored image: image/png, 2 KB, sha256 {digest[:12]}" in shown.stdout
    assert "[image: image/png" in shown.stdout
    assert sid in listed.stdout
    [ref] = [r for m in json.loads(exported.stdout)["messages"] for r in m.get("images", [])]
    assert ref["sha256"] == digest and ref["mimeType"] == "image/png"
    assert f"sha256 {digest[:12]}" in markdown.stdout
    assert events == []  # no image file opened, let alone read


def test_show_list_and_export_never_open_a_stored_image(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    sid, stored = recorded(run_cli, server, workspace, cli_home)
    showing(run_cli, sid, stored)


@pytest.mark.parametrize(
    "by", ["a FIFO", "a 2 GB sparse file", "a directory", "a link to /dev/zero"]
)
def test_a_stored_image_replaced_is_shown_by_its_record_and_continue_goes_on(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path, by: str
) -> None:
    sid, stored = recorded(run_cli, server, workspace, cli_home)
    replace(stored, by)
    showing(run_cli, sid, stored)

    server.enqueue(Reply.text(["on we go"]))
    with Watch(stored.parent) as watch:
        resumed = run_cli(["run", "--continue", "again"], server=server, timeout=HANG)
        events = watch.events()
    assert resumed.returncode == 0, resumed.stderr
    assert "on we go" in resumed.stdout
    [warning] = image_warnings(resumed.stderr)  # one line, saying why
    why = {
        "a FIFO": "a FIFO, not a regular file",
        "a 2 GB sparse file": "not of its recorded size",
        "a directory": "a directory, not a regular file",
        "a link to /dev/zero": "a link, not followed",
    }[by]
    assert f"1 of its stored images cannot be sent on (1 {why}" in warning
    assert (stored.name, "read") not in events  # checked before a byte was read
    sent = wire(server, 2)
    assert all(isinstance(m["content"], str) for m in sent)  # no image part went
    assert any("[image: image/png" in m["content"] for m in sent if m["role"] == "tool")


def test_an_image_over_images_max_bytes_is_not_opened_on_continue(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    """The limit is checked against the record before the file is opened: an image
    stored under a larger limit is its description once the limit is lower."""
    sid, stored = recorded(run_cli, server, workspace, cli_home)
    config(cli_home, "[images]\nmax_bytes = 1000\n")
    server.enqueue(Reply.text(["on we go"]))
    with Watch(stored.parent) as watch:
        resumed = run_cli(["run", "--resume", sid, "again"], server=server, timeout=HANG)
        events = watch.events()
    assert resumed.returncode == 0, resumed.stderr
    [warning] = image_warnings(resumed.stderr)
    assert "(1 over images.max_bytes" in warning
    assert events == []
    assert all(isinstance(m["content"], str) for m in wire(server, 2))


def test_continue_reads_an_intact_image_and_sends_it(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    """The other side: the run that sends the image on does read it (the watch sees it)."""
    _, stored = recorded(run_cli, server, workspace, cli_home)
    server.enqueue(Reply.text(["on we go"]))
    with Watch(stored.parent) as watch:
        resumed = run_cli(["run", "--continue", "again"], server=server, timeout=HANG)
        events = watch.events()
    assert resumed.returncode == 0, resumed.stderr
    assert not image_warnings(resumed.stderr)
    assert (stored.name, "read") in events
    parts = [p for m in wire(server, 2) if isinstance(m["content"], list) for p in m["content"]]
    assert any(part["type"] == "image_url" for part in parts)
