"""Readers of files someone else can write (a cloned repository's build files, a file a
command swapped after a tool wrote it), each given a FIFO in the file's place. Each runs
in a child process: a reader that waited on the FIFO would hang the child, which the
timeout (there only to end a hang) turns into a failure; no verdict rests on timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HANG = 60  # seconds: only a hang reaches it


def in_child(code: str, where: Path) -> str:
    """What `code` prints, run in a fresh interpreter with `where` as its argument."""
    done = subprocess.run(
        [sys.executable, "-c", code, str(where)],
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_fifo_as_a_build_file_leaves_init_with_the_directory_name(tmp_path: Path) -> None:
    """`/init` reads pyproject.toml, Cargo.toml, package.json, go.mod: FIFOs there are
    as if they were missing."""
    root = tmp_path / "project-x"
    root.mkdir()
    for name in ("pyproject.toml", "Cargo.toml", "package.json", "go.mod", "Makefile"):
        os.mkfifo(root / name)
    code = (
        "import sys, pathlib; from agentcli.context.agents_file import project_name, "
        "test_command; r = pathlib.Path(sys.argv[1]); "
        "print(project_name(r)); print(test_command(r, ['package.json', 'Makefile']))"
    )
    name, _ = in_child(code, root).split("\n", 1)
    assert name == "project-x"


def test_a_file_swapped_for_a_fifo_after_a_write_is_said_in_the_diff(tmp_path: Path) -> None:
    """The run's diff reads each written file again: a FIFO a command put there is one
    line of the diff, not a hang."""
    written = tmp_path / "notes.txt"
    written.write_text("before\n")
    code = (
        "import os, sys, pathlib; from agentcli.workspace.changes import WorkspaceChanges; "
        "p = pathlib.Path(sys.argv[1]); c = WorkspaceChanges(p.parent); c.before_write(p); "
        "p.unlink(); os.mkfifo(p); print(c.diff())"
    )
    expected = "notes.txt: cannot read it now (it is a FIFO, not a regular file)"
    assert in_child(code, written) == expected


def test_a_fifo_as_the_entry_point_cache_is_rebuilt_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "entry-points.json"
    os.mkfifo(fifo)
    code = "import sys; from agentcli.plugins.discovery import _read; print(_read(sys.argv[1], []))"
    assert in_child(code, fifo) == "None"


def test_a_fifo_as_a_hooks_file_is_no_hooks(tmp_path: Path) -> None:
    fifo = tmp_path / "settings.json"
    os.mkfifo(fifo)
    code = (
        "import sys, json, pathlib; from agentcli.habits.hooks import _load_json; "
        "print(json.dumps(_load_json(pathlib.Path(sys.argv[1]))))"
    )
    assert json.loads(in_child(code, fifo)) is None
