"""End-to-end: checkpoints and `agentcli sessions rewind`, through the installed CLI against
the scripted server — edits, writes, a deletion and a rename by a command, a file changed
outside agentcli in between (a conflict), a symbolic link planted to lead out (never
followed), the bound on what is kept (the oldest dropped), protected paths, bad input."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer

DONE = "Done."


def write(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"name": "edit_file", "arguments": {"path": path, "old_text": old, "new_text": new}}


def shell(command: str) -> dict[str, Any]:
    return {"name": "run_shell", "arguments": {"command": command}}


def turn(run_cli: RunCli, server: ScriptedServer, prompt: str, *calls: dict[str, Any]) -> None:
    """One `agentcli run` (continuing the session after the first) making `calls`."""
    if calls:
        server.enqueue(Reply.tool_calls(list(calls)))
    server.enqueue(Reply.text([DONE]))
    again = ["--continue"] if server.requests else []
    result = run_cli(["run", "--yes", *again, prompt], server=server)
    assert result.returncode == 0, result.stderr


def session_id(cli_home: Path) -> str:
    [path] = (cli_home / "agentcli" / "data" / "sessions").glob("*.jsonl")
    return path.stem


def checkpoint_dir(cli_home: Path) -> Path:
    return cli_home / "agentcli" / "data" / "checkpoints" / session_id(cli_home)


def log(cli_home: Path) -> list[dict[str, Any]]:
    text = (checkpoint_dir(cli_home) / "log.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def rewind(run_cli: RunCli, cli_home: Path, *args: str) -> Any:
    return run_cli(["sessions", "rewind", session_id(cli_home), *args])


def sent_users(server: ScriptedServer) -> list[str]:
    return [m["content"] for m in server.requests[-1].json["messages"] if m["role"] == "user"]


def test_edits_writes_a_deletion_and_a_rename_are_undone_turn_by_turn(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    notes, readme = workspace / "notes.txt", workspace / "README.md"
    original_notes, original_readme = notes.read_text(), readme.read_text()
    turn(run_cli, server, "first: rewrite the notes", write("notes.txt", "v1\n"))
    turn(
        run_cli,
        server,
        "second: edit the notes, add a file",
        edit("notes.txt", "v1", "v2"),
        write("new.txt", "brand new\n"),
    )
    turn(run_cli, server, "third: a command", shell("rm README.md && mv notes.txt renamed.txt"))
    assert not readme.exists() and not notes.exists()
    assert (workspace / "renamed.txt").read_text() == "v2\n"

    # The files of the third turn only: the deletion and the rename by the command undone.
    third = rewind(run_cli, cli_home, "--to", "3", "--files")
    assert third.returncode == 0, third.stdout + third.stderr
    assert readme.read_text() == original_readme
    assert notes.read_text() == "v2\n"
    assert not (workspace / "renamed.txt").exists()
    assert "restored (it had been deleted): README.md" in third.stdout
    assert "removed (the turn made it): renamed.txt" in third.stdout
    assert "conversation" not in third.stdout.splitlines()[-1]

    # Then files and conversation back to before the second turn.
    second = rewind(run_cli, cli_home, "--to", "2")
    assert second.returncode == 0, second.stdout + second.stderr
    assert notes.read_text() == "v1\n"
    assert not (workspace / "new.txt").exists()
    assert readme.read_text() == original_readme
    assert "the conversation is back to before turn 2" in second.stdout

    listed = run_cli(["sessions", "list", "--json"])
    assert json.loads(listed.stdout)[0]["turns"] == 1
    turn(run_cli, server, "after the rewind")
    assert sent_users(server) == ["first: rewrite the notes", "after the rewind"]

    # And the first turn too: the file as it was before the session.
    first = rewind(run_cli, cli_home, "--to", "1", "--files")
    assert first.returncode == 0, first.stdout + first.stderr
    assert notes.read_text() == original_notes


def test_a_file_changed_outside_agentcli_is_a_conflict_and_nothing_is_written(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    notes, readme = workspace / "notes.txt", workspace / "README.md"
    original_notes, original_readme = notes.read_text(), readme.read_text()
    turn(
        run_cli,
        server,
        "change two files",
        write("notes.txt", "by agentcli\n"),
        write("README.md", "readme by agentcli\n"),
    )
    notes.write_text("by hand, since\n")

    refused = rewind(run_cli, cli_home, "--to", "1")
    assert refused.returncode == 1, refused.stdout
    assert notes.read_text() == "by hand, since\n"  # never overwritten silently
    assert readme.read_text() == "readme by agentcli\n"  # nor anything else: all or nothing
    assert "conflict: notes.txt changed since agentcli's last change" in refused.stdout
    assert "nothing was restored" in refused.stdout
    listed = run_cli(["sessions", "list", "--json"])
    assert json.loads(listed.stdout)[0]["turns"] == 1  # the conversation stays too

    forced = rewind(run_cli, cli_home, "--to", "1", "--force")
    assert forced.returncode == 0, forced.stdout
    assert notes.read_text() == original_notes and readme.read_text() == original_readme
    kept = hashlib.sha256(b"by hand, since\n").hexdigest()
    assert (checkpoint_dir(cli_home) / "objects" / kept).exists()  # what it replaced is kept
    # Never inside the workspace.
    assert not any("checkpoints" in str(p) or "objects" in p.parts for p in workspace.rglob("*"))


def test_a_link_planted_to_lead_out_is_not_followed(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path, tmp_path: Path
) -> None:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "guide.txt").write_text("original guide\n")
    turn(run_cli, server, "change the guide", write("docs/guide.txt", "changed guide\n"))
    # The directory swapped for a link to a place outside holding what agentcli left.
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "guide.txt").write_text("changed guide\n")
    (workspace / "docs").rename(tmp_path / "moved-docs")
    (workspace / "docs").symlink_to(outside)

    refused = rewind(run_cli, cli_home, "--to", "1", "--files")
    assert refused.returncode == 1
    assert "conflict: docs/guide.txt" in refused.stdout
    assert "a symbolic link on the way" in refused.stdout
    forced = rewind(run_cli, cli_home, "--to", "1", "--files", "--force")
    assert forced.returncode == 1, forced.stdout
    assert "not restored: docs/guide.txt" in forced.stdout
    assert (outside / "guide.txt").read_text() == "changed guide\n"  # outside: untouched
    assert (workspace / "docs").is_symlink()


def test_the_bound_drops_the_oldest_and_large_files_are_kept_by_size(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[checkpoints]\nmax_bytes = 3000\nmax_file_bytes = 2500\n")
    (workspace / "one.txt").write_text("1" * 2000)
    (workspace / "two.txt").write_text("2" * 2000)
    (workspace / "big.bin").write_bytes(bytes(range(256)) * 12)  # 3,072 bytes
    turn(run_cli, server, "first", write("one.txt", "one\n"))
    turn(run_cli, server, "second", write("two.txt", "two\n"), write("big.bin", "small now\n"))

    objects = list((checkpoint_dir(cli_home) / "objects").iterdir())
    assert sum(p.stat().st_size for p in objects) <= 3000
    result = rewind(run_cli, cli_home, "--to", "1", "--files")
    assert result.returncode == 1, result.stdout
    assert (workspace / "two.txt").read_text() == "2" * 2000  # the newest kept
    assert (workspace / "one.txt").read_text() == "one\n"  # the oldest dropped
    assert "not restored: one.txt: its content was dropped from the checkpoints" in result.stdout
    assert "not restored: big.bin: it was 3,072 bytes, over checkpoints.max_file_bytes" in (
        result.stdout
    )
    assert "1 file restored" in result.stdout


def test_a_rewind_never_writes_a_protected_path(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True)
    turn(run_cli, server, "write", write("notes.txt", "new\n"))
    # A log edited by hand (or by a command) to name a hook and a path leading out.
    payload = b"#!/bin/sh\necho planted\n"
    sha = hashlib.sha256(payload).hexdigest()
    (checkpoint_dir(cli_home) / "objects" / sha).write_bytes(payload)
    turn_id = log(cli_home)[0]["turn"]
    before = {"kind": "file", "sha256": sha, "size": len(payload), "kept": True}
    with (checkpoint_dir(cli_home) / "log.jsonl").open("a") as stream:
        for path in (".git/hooks/post-checkout", "../escaped.sh"):
            record = {"t": "change", "turn": turn_id, "path": path, "before": before}
            stream.write(json.dumps({**record, "after": {"kind": "none"}}) + "\n")

    result = rewind(run_cli, cli_home, "--to", "1", "--files")
    assert result.returncode == 1, result.stdout
    assert "not restored: .git/hooks/post-checkout: a protected path" in result.stdout
    assert not (workspace / ".git" / "hooks" / "post-checkout").exists()
    assert not (workspace.parent / "escaped.sh").exists()
    assert "escaped" not in result.stdout  # a path leading out is not even read
    assert (workspace / "notes.txt").read_text().startswith("first note")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--to", "0"], "turn 0 is not in this session"),
        (["--to", "5"], "give a number from 1 to 1"),
        (["--to", "1", "--files", "--chat"], "not both"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, args: list[str], needle: str
) -> None:
    turn(run_cli, server, "only turn", write("notes.txt", "x\n"))
    result = rewind(run_cli, cli_home, *args)
    assert result.returncode == 2
    assert_one_error(result, needle)


def test_chat_only_keeps_the_files(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    turn(run_cli, server, "one", write("notes.txt", "one\n"))
    turn(run_cli, server, "two", write("notes.txt", "two\n"))
    result = rewind(run_cli, cli_home, "--to", "2", "--chat")
    assert result.returncode == 0, result.stdout
    assert (workspace / "notes.txt").read_text() == "two\n"
    turn(run_cli, server, "three")
    assert sent_users(server) == ["one", "three"]


def test_a_full_baseline_is_said_when_it_happens_and_when_rewinding(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    """Past MAX_SCANNED files a command's scan stops: what it changed beyond them is not
    kept. That was silent, and the rewind said "no file to restore" over clobbered files;
    now the run warns once and the rewind says what its record does not hold (exit 1)."""
    from agentcli.workspace.checkpoints import MAX_SCANNED

    many = workspace / "0"
    many.mkdir()
    for number in range(MAX_SCANNED + 1):
        (many / f"{number:05d}").touch()
    (workspace / "zz.txt").write_text("kept\n")  # sorted after the scan's end
    server.enqueue(Reply.tool_calls([shell("echo clobbered > zz.txt")]), Reply.text([DONE]))
    result = run_cli(["run", "--yes", "go"], server=server, timeout=120)
    assert result.returncode == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "checkpoints:" in line]
    assert len(warned) == 1 and f"more than {MAX_SCANNED:,} files" in warned[0], result.stderr
    assert any(record.get("t") == "gap" for record in log(cli_home))
    rewound = rewind(run_cli, cli_home, "--to", "1")
    assert rewound.returncode == 1, rewound.stdout + rewound.stderr
    assert "not restored: (the turn's other files)" in rewound.stdout + rewound.stderr
    assert "no file to restore" not in rewound.stdout
