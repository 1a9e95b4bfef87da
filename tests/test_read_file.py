"""read_file and workspace confinement on real files."""

from __future__ import annotations

import asyncio
import os
import tracemalloc
from pathlib import Path

import pytest

from agentcli.risk import Risk
from agentcli.tools.base import ToolContext, ToolFailure
from agentcli.tools.read_file import MAX_LINE_CHARS, ReadFile
from agentcli.workspace.root import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    return root


def read(root: Path, **args):
    ctx = ToolContext(workspace=Workspace(root))
    return asyncio.run(ReadFile().execute(args, ctx))


def risk(root: Path, path: str) -> Risk:
    return ReadFile().assess({"path": path}, ToolContext(workspace=Workspace(root))).risk


def test_numbered_lines_with_header(ws):
    out = read(ws, path="a.txt")
    lines = out.content.splitlines()
    assert lines[0] == "a.txt: lines 1-10 of 10"
    assert lines[1] == "     1\tline 1" and lines[-1] == "    10\tline 10"
    assert out.summary == "10 lines"


def test_offset_and_limit_page_through(ws):
    out = read(ws, path="a.txt", offset=4, limit=2)
    assert out.content.splitlines() == [
        "a.txt: lines 4-5 of 10 (continue with offset=6)",
        "     4\tline 4",
        "     5\tline 5",
    ]
    with pytest.raises(ToolFailure, match="has 10 lines; offset 11 is past the end"):
        read(ws, path="a.txt", offset=11)


def test_errors_for_missing_file_directory_binary_and_permissions(ws):
    with pytest.raises(ToolFailure, match=r"no such file: nope\.txt"):
        read(ws, path="nope.txt")
    (ws / "sub").mkdir()
    with pytest.raises(ToolFailure, match="is a directory"):
        read(ws, path="sub")
    (ws / "prog").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00")
    with pytest.raises(ToolFailure, match=r"binary file \(ELF executable, 9 bytes\)"):
        read(ws, path="prog")
    if os.geteuid() != 0:  # root reads everything
        secret = ws / "secret.txt"
        secret.write_text("x")
        secret.chmod(0)
        with pytest.raises(ToolFailure, match="permission denied"):
            read(ws, path="secret.txt")


def test_undecodable_bytes_are_replaced_and_long_lines_cut(ws):
    (ws / "latin.txt").write_bytes(b"caf\xe9\n" + b"x" * (MAX_LINE_CHARS * 5) + b"\nend\n")
    lines = read(ws, path="latin.txt").content.splitlines()
    assert lines[1] == "     1\tcaf\ufffd"
    assert lines[2].endswith("[… line truncated]") and len(lines[2]) < MAX_LINE_CHARS + 40
    assert lines[3] == "     3\tend"


def test_empty_file(ws):
    (ws / "empty").write_text("")
    assert "empty file" in read(ws, path="empty").content


def test_paths_outside_the_workspace_are_high_risk(ws, tmp_path):
    (tmp_path / "outside.txt").write_text("secret")
    evil = tmp_path / "proj-evil"
    evil.mkdir()
    (evil / "x").write_text("x")
    (ws / "link.txt").symlink_to(tmp_path / "outside.txt")
    assert risk(ws, "a.txt") is Risk.LOW
    assert risk(ws, "./sub/../a.txt") is Risk.LOW
    assert risk(ws, "../outside.txt") is Risk.HIGH
    assert risk(ws, str(tmp_path / "outside.txt")) is Risk.HIGH
    assert risk(ws, "../proj-evil/x") is Risk.HIGH  # a sibling sharing the prefix is outside
    assert risk(ws, "link.txt") is Risk.HIGH  # a symlink pointing out is out
    assert risk(ws, "/etc/passwd") is Risk.HIGH


def test_large_file_is_not_read_into_memory(tmp_path):
    big = tmp_path / "big.log"
    line = b"0123456789" * 10 + b"\n"
    with open(big, "wb") as f:
        for _ in range(50):
            f.write(line * 20_000)  # 50 * 20,000 lines of 101 bytes: about 100 MB
    tracemalloc.start()
    out = read(tmp_path, path="big.log", offset=500_000, limit=3)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert out.content.splitlines()[0].startswith("big.log: lines 500000-500002 of 1000000")
    assert peak < 5_000_000
