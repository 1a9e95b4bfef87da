"""File tools open what they checked: a racing process swapping a directory for a symlink
out of the workspace never gets a read, listing or write through; special files are
refused without blocking."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from agentcli.tools.create_directory import CreateDirectory
from agentcli.tools.edit_file import EditFile
from agentcli.tools.list_directory import ListDirectory
from agentcli.tools.read_file import ReadFile
from agentcli.tools.write_file import WriteFile
from agentcli.workspace.root import Workspace

SECRET = "SECRET-OUTSIDE"


@pytest.fixture
def dirs(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    # In memory where there is a tmpfs: renames on a busy disk cost milliseconds each.
    memory = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(dir=memory) as scratch:
        yield _make_dirs(Path(scratch))


def _make_dirs(root: Path) -> tuple[Path, Path]:
    ws, outside = root / "proj", root / "outside"
    for root, text, marker in ((ws / "d", "inside", "only-in"), (outside, SECRET, "only-out")):
        root.mkdir(parents=True)
        (root / "f.txt").write_text(text + "\n")
        (root / marker).write_text("x")
    return ws, outside


SWAPPER = """
import os, shutil, sys
real, away, outside = sys.argv[1:]

def replace(make):  # removes what a tool created at `real` meanwhile (a missing d is made)
    while True:
        try:
            return make()
        except OSError:
            shutil.rmtree(real, ignore_errors=True)

print("ready", flush=True)
while True:
    os.rename(real, away)
    replace(lambda: os.symlink(outside, real))
    os.unlink(real)
    replace(lambda: os.rename(away, real))
"""


def _start_swapper(ws: Path, outside: Path) -> subprocess.Popen[str]:
    """A separate process that swaps ws/d between the real directory and a symlink to
    `outside` as fast as it can (a process, not a thread: no GIL between the racers)."""
    args = [sys.executable, "-c", SWAPPER, str(ws / "d"), str(ws / "d-away"), str(outside)]
    swapper = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    assert swapper.stdout is not None and swapper.stdout.readline() == "ready\n"
    return swapper


async def execute(tool: Tool, args: dict, ctx: ToolContext) -> ToolOutput:
    """As the executor runs a tool: an expected failure is an error result."""
    try:
        return await tool.execute(args, ctx)
    except (ToolFailure, OSError) as failure:  # OSError: the swapper removed a directory
        return ToolOutput.failure(str(failure))


def _escaped(result: ToolOutput) -> bool:
    return SECRET in result.content or "only-out" in result.content


CALLS = 10_000
BATCH = 20


def test_a_racing_symlink_swapper_never_gets_a_file_tool_outside(dirs, monkeypatch):
    ws, outside = dirs

    # The race is in the file system: skip what only costs time here (the hop to a worker
    # thread, and fsync, which takes milliseconds on a busy disk).
    async def inline(fn, /, *args, **kwargs):
        return fn(*args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", inline)
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    ctx = ToolContext(workspace=Workspace(ws))  # confined: approved as inside the workspace
    calls = [
        (ReadFile(), {"path": "d/f.txt"}),
        (ListDirectory(), {"path": "d"}),
        (WriteFile(), {"path": "d/new.txt", "content": "w"}),
        (EditFile(), {"path": "d/f.txt", "old_text": "\n", "new_text": "\n\n"}),
        (CreateDirectory(), {"path": "d/sub"}),
    ]

    async def hammer() -> tuple[int, int, int]:
        escapes = refused = done = 0
        for batch in range(0, CALLS, BATCH):  # concurrently, as the executor runs calls
            results = await asyncio.gather(
                *(execute(*calls[i % len(calls)], ctx) for i in range(batch, batch + BATCH))
            )
            for result in results:
                escapes += _escaped(result)
                refused += result.error
                done += not result.error
        return escapes, refused, done

    swapper = _start_swapper(ws, outside)
    started = time.monotonic()
    try:
        escapes, refused, done = asyncio.run(hammer())
    finally:
        running = swapper.poll() is None
        swapper.kill()
        swapper.wait()
    assert running, "the swapper stopped before the calls did"
    elapsed = time.monotonic() - started
    assert escapes == 0
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt", "only-out"]
    assert (outside / "f.txt").read_text() == SECRET + "\n"
    assert refused > 0 and done > 0  # the race was really run, both ways
    print(f"{CALLS} calls in {elapsed:.1f} s: {done} done, {refused} refused, 0 escapes")
    assert elapsed < 60


@pytest.fixture
def special(tmp_path: Path):
    ws = tmp_path / "proj"
    ws.mkdir()
    os.mkfifo(ws / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(ws / "sock"))
    yield ws
    sock.close()


def _run(tool, args, ctx) -> ToolOutput:
    """Runs a tool in a thread so that a tool blocked on a FIFO fails the test, not hangs it."""
    box: list[ToolOutput] = []
    thread = threading.Thread(target=lambda: box.append(asyncio.run(execute(tool, args, ctx))))
    thread.daemon = True
    thread.start()
    thread.join(5)
    assert box, f"{tool.name} blocked on {args['path']}"
    return box[0]


@pytest.mark.parametrize(
    ("name", "kind"), [("fifo", "FIFO"), ("sock", "socket"), ("/dev/null", "character device")]
)
@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        (ReadFile(), {}),
        (EditFile(), {"old_text": "a", "new_text": "b"}),
        (WriteFile(), {"content": "x"}),
    ],
)
def test_file_tools_refuse_special_files_without_blocking(special, name, kind, tool, extra):
    # /dev/null is beyond the boundary: as a person's approval of that one path would.
    grant = Path(name) if name.startswith("/") else None
    ctx = ToolContext(workspace=Workspace(special), confine=grant is None, grant=grant)
    result = _run(tool, {"path": name, **extra}, ctx)
    assert result.error
    assert kind in result.content or "not a regular file" in result.content


def test_previews_do_not_block_on_a_fifo(special):
    ctx = ToolContext(workspace=Workspace(special))
    box: list[str | None] = []
    thread = threading.Thread(
        target=lambda: box.append(
            EditFile().preview({"path": "fifo", "old_text": "a", "new_text": "b"}, ctx)
        ),
        daemon=True,
    )
    thread.start()
    thread.join(5)
    assert box and "FIFO" in (box[0] or "")


@pytest.mark.parametrize(("backend", "calls"), [("python", 2000), ("ripgrep", 300)])
def test_a_racing_swapper_never_gets_a_search_outside(dirs, monkeypatch, backend, calls):
    from agentcli.tools.search import SearchContent, SearchFiles
    from agentcli.tools.search_rg import find_ripgrep

    if backend == "ripgrep" and find_ripgrep() is None:
        pytest.skip("no ripgrep")
    ws, outside = dirs
    ctx = ToolContext(workspace=Workspace(ws))
    tools = [
        (SearchContent(backend), {"pattern": "SECRET|inside", "path": "d"}),
        (SearchFiles(backend), {"pattern": "*", "path": "d"}),
        (SearchContent(backend), {"pattern": "SECRET|inside", "path": "d/f.txt"}),
    ]

    async def hammer() -> list[ToolOutput]:
        results = []
        for batch in range(0, calls, BATCH):
            results += await asyncio.gather(
                *(execute(*tools[i % len(tools)], ctx) for i in range(batch, batch + BATCH))
            )
        return results

    swapper = _start_swapper(ws, outside)
    try:
        results = asyncio.run(hammer())
    finally:
        swapper.kill()
        swapper.wait()
    assert not [r.content for r in results if _escaped(r)]
    assert any(r.error for r in results)  # the race was really run: some calls refused
