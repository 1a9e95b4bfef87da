"""End-to-end: a full or read-only data directory never loses a tool's output. A real
small tmpfs fills up (or is full from the start), a read-only bind mount refuses every
write: the command runs, what it printed reaches the model (head and tail, within the
output limit) with a marker that says the whole was not saved, the run says so once, and
no traceback is printed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentcli.process.capture import OutputCapture
from tests.conftest import AGENTCLI, RunCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_session_faults import can_mount, read_only
from tests.test_e2e_sessions import warning_lines

needs_mount = pytest.mark.skipif(not can_mount(), reason="needs unshare and mount")
LINES = 400_000  # `seq` prints 2.6 MB: far more than the small file system holds
COMMAND = f"echo ran > side-effect.txt; seq 1 {LINES}; echo the-end"


def small_tmpfs(directory: Path, size: str, fill: int = 0) -> list[str]:
    """An executable prefix: agentcli with a tmpfs of `size` mounted on `directory`,
    `fill` bytes of it taken before agentcli starts."""
    filler = f'head -c {fill} /dev/zero > "{directory}/filler" 2>/dev/null; ' if fill else ""
    script = f'mount -t tmpfs -o size={size} none "{directory}" && {filler}exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, "sh", str(AGENTCLI)]


def run_the_command(
    run_cli: RunCli, server: ScriptedServer, prefix: list[str]
) -> tuple[subprocess.CompletedProcess[str], str]:
    call = {"id": "call_seq", "name": "run_shell", "arguments": {"command": COMMAND}}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["seen"]))
    result = run_cli(
        ["run", "--yes", "--sandbox", "none", "count"], server=server, executable=prefix, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("seen\n"), result.stdout
    assert "Traceback" not in result.stderr and "Exception in" not in result.stderr
    [tool] = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    return result, tool["content"]


def assert_output_reached_the_model(content: str, workspace: Path) -> str:
    """The head and the tail are there, the marker is honest; returns the marker."""
    assert content.startswith(f"$ {COMMAND}\nexit code 0"), content[:200]
    assert "\n1\n2\n3\n" in content and content.rstrip().endswith(f"{LINES}\nthe-end")
    assert not content.startswith("Error")
    assert (workspace / "side-effect.txt").read_text() == "ran\n"
    [marker] = [line for line in content.splitlines() if "omitted" in line]
    assert "was not saved" in marker and "read_file" not in marker, marker
    return marker


FAULTS = {  # how the data directory fails, and what the one warning line says
    "fills-up-mid-command": (
        lambda data: small_tmpfs(data, "512k"),
        ["outputs", "No space left on device", "this session and its command outputs"],
    ),
    "full-from-the-start": (
        lambda data: small_tmpfs(data, "64k", fill=1_000_000),
        ["session file", "No space left on device", "not saved"],
    ),
    "read-only": (read_only, ["session file", "Read-only file system", "not saved"]),
}


@needs_mount
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_data_directory_that_cannot_take_the_output(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path, fault: str
) -> None:
    data = cli_home / "agentcli" / "data"
    data.mkdir(parents=True)
    prefix, needles = FAULTS[fault]
    result, content = run_the_command(run_cli, server, prefix(data))
    assert_output_reached_the_model(content, workspace)
    [line] = warning_lines(result.stderr)  # said once, whatever else then failed
    for needle in needles:
        assert needle in line, line


@needs_mount
def test_a_background_job_on_a_full_data_directory(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    data = cli_home / "agentcli" / "data"
    data.mkdir(parents=True)
    start = {
        "id": "call_bg",
        "name": "run_shell",
        "arguments": {"command": f"seq 1 {LINES}; echo the-end", "background": True},
    }
    pause = {"id": "call_wait", "name": "run_shell", "arguments": {"command": "sleep 1.5"}}
    read = {"id": "call_read", "name": "job_output", "arguments": {"job_id": "job_1"}}
    steps = [Reply.tool_calls([c]) for c in (start, pause, read)]
    server.enqueue(*steps, Reply.text(["ok"]))
    result = run_cli(
        ["run", "--yes", "--sandbox", "none", "go"],
        server=server,
        executable=small_tmpfs(data, "512k"),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "Exception in" not in result.stderr
    sent = server.requests[3].json["messages"]
    [tool] = [m for m in sent if m.get("tool_call_id") == "call_read"]
    assert "job_1" in tool["content"] and "exited with code 0" in tool["content"], tool
    assert tool["content"].rstrip().endswith("the-end"), tool["content"][-300:]
    assert len(warning_lines(result.stderr)) == 1, result.stderr


def test_a_capture_whose_file_cannot_be_written_keeps_head_and_tail(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")  # a file where the outputs directory should be
    told = []
    capture = OutputCapture(
        100, spill_path=blocked / "out.log", on_spill_error=lambda p, e: told.append((p, e))
    )
    for number in range(1000):
        capture.feed(f"line {number}\n".encode())
    capture.close()
    text = capture.text()
    assert text.startswith("line 0\n") and text.endswith("line 999\n")
    assert "the whole output was not saved (File exists)" in text  # mkdir, on a file
    assert len(told) == 1 and told[0][0] == blocked / "out.log"
