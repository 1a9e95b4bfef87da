"""MCP floods, from outside: the installed `agentcli run` against a hand-written server that
floods (tests/fixtures/mcp/flood_server.py) and the scripted model server, the server
reached over each transport: stdio, streamable HTTP, and the legacy HTTP+SSE transport.

- 20,000 progress notifications on one call: the session gains a bounded number of lines
  (the latest value a few times a second), and the call is answered, not cancelled.
- 20,000 log messages: stderr gets a bounded number, plus one line counting the dropped.
- Progress moves a call's deadline: a server that reports every fraction of its timeout
  and answers after several timeouts' worth is answered; a silent one times out as before.
- A long result line is read whole (the SDK's reader is given whole lines: unit-checked,
  since a verdict by elapsed time would depend on the machine's load); over HTTP, a 10 MB
  result is one SSE event, past the SDK's 1 MiB limit on one (agentcli raises it).

The bounds are rates: what a limit of N a second allows over the run's own duration (the
run is timed only to compute that allowance, never to judge it)."""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcli.mcp.floods import LOG_BURST, LOG_RATE, PROGRESS_INTERVAL
from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_sessions import only_session, records
from tests.test_mcp import toml_str, tool_messages, write_config
from tests.test_mcp_http import listening_servers

pytest.importorskip("mcp")
FLOOD_SERVER = Path(__file__).parent / "fixtures" / "mcp" / "flood_server.py"
FLOOD = 20_000


TRANSPORTS = ["stdio", "streamable-http", "sse"]
Configure = Callable[..., None]


@pytest.fixture(params=TRANSPORTS)
def flood_server(request: pytest.FixtureRequest, cli_home: Path) -> Iterator[Configure]:
    """flood_server(extra="") configures the flood server `flood` over the transport of the
    test's parameter (over HTTP: started now, on a port of its own, stopped at teardown)."""
    transport = request.param
    with listening_servers() as start:

        def configure(extra: str = "") -> None:
            if transport == "stdio":
                reach = (
                    f"command = {toml_str(sys.executable)}\nargs = [{toml_str(str(FLOOD_SERVER))}]"
                )
            else:
                url = start([str(FLOOD_SERVER), transport])
                chosen = "sse" if transport == "sse" else "http"
                reach = f"url = {toml_str(url)}\ntransport = {toml_str(chosen)}"
            write_config(cli_home, f"[mcp.servers.flood]\n{reach}\ntrusted = true\n{extra}\n")

        yield configure


def run_call(
    run_cli: RunCli, server: ScriptedServer, tool: str, arguments: dict[str, Any]
) -> tuple[Any, str, float]:
    """One call, then the model's answer: the run, the result the model got, and how long
    the run took (for the rate bounds only)."""
    call = {"id": "call_1", "name": f"mcp__flood__{tool}", "arguments": arguments}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["done"]))
    began = time.monotonic()
    result = run_cli(["run", "--yes", "go"], server=server, timeout=240)
    took = time.monotonic() - began
    assert result.returncode == 0, result.stderr
    (message,) = tool_messages(server, 1)
    return result, message["content"], took


def test_a_flood_of_progress_keeps_the_latest_value_and_the_session_small(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, flood_server: Configure
) -> None:
    flood_server("tool_timeout = 600")
    _, content, took = run_call(run_cli, server, "progress", {"count": FLOOD})
    assert content == f"sent {FLOOD} progress notifications"  # answered, not cancelled
    session = only_session(cli_home)
    lines = session.read_text(encoding="utf-8").splitlines()
    allowed = took / PROGRESS_INTERVAL + 2  # the first at once, the latest at the end
    events = [r["e"] for r in records(session) if r.get("t") == "event"]
    progress = [e["value"] for e in events if e.get("name") == "progress"]
    assert 1 <= len(progress) <= allowed, (len(progress), took)
    assert progress[-1]["progress"] == FLOOD  # the latest value is the one kept last
    assert len(lines) <= allowed + 40, (len(lines), took)  # besides progress: a few dozen


def test_a_flood_of_logs_is_rate_limited_with_a_count_of_the_dropped(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, flood_server: Configure
) -> None:
    flood_server()
    result, content, took = run_call(run_cli, server, "logs", {"count": FLOOD})
    assert content == f"sent {FLOOD} log messages"
    shown = [line for line in result.stderr.splitlines() if "log line " in line]
    assert 1 <= len(shown) <= LOG_BURST + LOG_RATE * took + 1, (len(shown), took)
    dropped = re.findall(r"… ([\d,]+) more log messages from flood dropped", result.stderr)
    assert dropped, result.stderr[-2000:]
    assert len(shown) + sum(int(n.replace(",", "")) for n in dropped) == FLOOD
    recorded = [
        r["e"]["value"]
        for r in records(only_session(cli_home))
        if r.get("t") == "event" and r["e"].get("name") == "mcp_log"
    ]
    assert len(recorded) == len(shown) + len(dropped)  # the session keeps what was said


def test_progress_moves_the_deadline_so_a_working_server_is_answered(
    run_cli: RunCli, server: ScriptedServer, flood_server: Configure
) -> None:
    """A 2 s limit; progress every 0.25 s for 6 s: three limits' worth, never a silent 2 s."""
    flood_server("tool_timeout = 2")
    _, content, _ = run_call(run_cli, server, "pulse", {"every": 0.25, "beats": 24})
    assert content == "pulsed"


def test_a_silent_call_still_times_out_with_the_same_message(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, flood_server: Configure
) -> None:
    flood_server("tool_timeout = 1")
    _, content, _ = run_call(run_cli, server, "silent", {})
    assert "no answer within 1 s, so the call was cancelled" in content
    assert "raise mcp.servers.flood.tool_timeout if it needs longer" in content
    events = [r["e"] for r in records(only_session(cli_home)) if r.get("t") == "event"]
    ended = [e for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert ended[0]["metadata"]["errorKind"] == "timeout"


def test_a_ten_megabyte_result_line_is_read_whole_and_capped(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, flood_server: Configure
) -> None:
    flood_server()
    _, content, _ = run_call(run_cli, server, "big", {"size": 10_000_000})
    assert content.startswith("xxxx") and len(content) < 100_000  # the head and tail
    kept = re.search(r"the full output is in (\S+) \(read it", content)
    assert kept, content[-2000:]
    assert Path(kept[1]).stat().st_size == 10_000_000  # received whole, kept whole


def test_the_sdk_reader_is_given_whole_lines() -> None:
    """What makes a long line linear: however many pieces a line arrives in, the SDK's
    reader receives it in one piece (its `buffer + chunk` then copies it once)."""
    import anyio
    import mcp.client.stdio as stdio

    from agentcli.adapters.mcp_stdio_lines import WholeLines, install

    install()
    assert stdio.TextReceiveStream is WholeLines

    async def pieces() -> list[str]:
        send, receive = anyio.create_memory_object_stream[bytes](1000)
        for _ in range(500):
            send.send_nowait(b"x" * 1000)
        send.send_nowait(b'y"\n{"z"')
        send.send_nowait(b": 1}\npartial")
        send.close()
        stream = WholeLines(receive, encoding="utf-8", errors="replace")  # type: ignore[arg-type]
        got = []
        with pytest.raises(anyio.EndOfStream):
            while True:
                got.append(await stream.receive())
        return got

    got = asyncio.run(pieces())
    assert got == ["x" * 500_000 + 'y"\n', '{"z": 1}\n', "partial"]


# --- the limits themselves, on a clock of the test's own


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_latest_value_sends_at_most_one_per_interval_and_the_latest_at_the_end() -> None:
    from agentcli.mcp.floods import LatestValue

    clock, sent = Clock(), []
    latest = LatestValue(sent.append, interval=0.25, clock=clock)
    for n in range(1, 1001):  # 1,000 notifications over one second
        clock.now = n / 1000
        latest.offer(n)
    latest.flush()  # the call ended
    assert sent[0] == 1 and sent[-1] == 1000
    assert len(sent) <= 1 / 0.25 + 2
    assert sent == sorted(sent)  # never an older value after a newer one


def test_log_limit_allows_a_burst_then_a_rate_and_counts_the_rest() -> None:
    from agentcli.mcp.floods import LogLimit

    clock, said = Clock(), []
    limit = LogLimit(said.append, lambda n: f"{n} dropped", burst=5, rate=2.0, clock=clock)
    for n in range(100):  # 100 at once
        limit.offer(n)
    assert said == [0, 1, 2, 3, 4]
    clock.now = 1.0  # a second later: two more may pass
    for n in range(100, 110):
        limit.offer(n)
    limit.flush()
    assert said == [0, 1, 2, 3, 4, 100, 101, "103 dropped"]
    limit.flush()
    assert said[-1] == "103 dropped"  # said once
