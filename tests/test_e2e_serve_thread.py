"""End-to-end: a served thread is not re-read per run, and its state has a bound. The
installed `agentcli serve` on 127.0.0.1 driven over HTTP, the model a scripted server:

- a second run on a thread reads only what its file gained since the first (an edit to an
  earlier line is not seen; a line another process appended is), and a file replaced is
  read anew;
- `/health` answers while a run is reading a large thread's file (read off the event loop:
  the answer comes while the server still has the file open for reading);
- the `MESSAGES_SNAPSHOT` after many runs (each message's encoding kept between runs) is
  what a server that kept nothing encodes of the same thread;
- plug-ins are found and loaded once per serve process: one installed while it runs is
  offered after a restart;
- `limits.state`: 20 `copy` ops that would double the state past it are refused whole, with
  a clear result to the model; the state is unchanged and the server's memory did not grow.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.agui_helpers import (
    AUTH,
    TOKEN,
    applied,
    free_port,
    post_run,
    run_input,
    types,
    wait_ready,
)
from tests.conftest import StartCli
from tests.scripted_server import Reply, ScriptedServer

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("jsonpatch")
psutil = pytest.importorskip("psutil")

USER = {"id": "u1", "role": "user", "content": "hi"}


@pytest.fixture
def serve(start_cli: StartCli, server: ScriptedServer):
    """Starts `agentcli serve` on a free port: (url, process)."""

    def start(env: dict[str, str] | None = None) -> tuple[str, subprocess.Popen[str]]:
        port = free_port()
        process = start_cli(
            ["serve", "--port", str(port), "--token-env", "AGUI_TOKEN"],
            server=server,
            env={"AGUI_TOKEN": TOKEN, **(env or {})},
        )
        url = f"http://127.0.0.1:{port}/"
        wait_ready(process, url)
        return url, process

    return start


def thread_file(cli_home: Path, thread: str) -> Path:
    return cli_home / "agentcli" / "data" / "sessions" / f"thread-{thread}.jsonl"


def system_of(request: object) -> str:
    return request.json["messages"][0]["content"]  # type: ignore[attr-defined]


def append_line(path: Path, record: dict) -> None:
    with path.open("a", encoding="utf-8") as stream:
        stream.write(json.dumps(record) + "\n")


def test_a_second_run_reads_only_what_the_thread_file_gained(
    serve, server: ScriptedServer, cli_home: Path
):
    url, _ = serve()
    server.enqueue(Reply.text(["one"]))
    post_run(url, run_input("kept", "r1", [USER]))
    path = thread_file(cli_home, "kept")

    # An earlier line changed in place (same length): a thread re-read would see "HO".
    data = path.read_bytes()
    at = data.index(b'"content":"hi"')
    with path.open("r+b") as stream:
        stream.seek(at)
        stream.write(b'"content":"HO"')
    # A line another process appended (as `agentcli --resume thread-kept` would).
    append_line(path, {"t": "event", "e": {"type": "STATE_SNAPSHOT", "snapshot": {"mark": 7}}})

    server.enqueue(Reply.text(["two"]))
    post_run(url, run_input("kept", "r2", [{"id": "u2", "role": "user", "content": "again"}]))
    messages = server.requests[1].json["messages"]
    assert messages[1] == {"role": "user", "content": "hi"}  # not read again
    assert '"mark": 7' in system_of(server.requests[1])  # the appended part was read

    # The file really holds the edit: a server that reads it whole sees it.
    again, _ = serve()
    server.enqueue(Reply.text(["three"]))
    post_run(again, run_input("kept", "r3", [{"id": "u3", "role": "user", "content": "x"}]))
    assert server.requests[2].json["messages"][1]["content"] == "HO"


def test_a_thread_file_replaced_between_runs_is_read_anew(
    serve, server: ScriptedServer, cli_home: Path
):
    url, _ = serve()
    server.enqueue(Reply.text(["one"]))
    post_run(url, run_input("swap", "r1", [USER]))
    path = thread_file(cli_home, "swap")
    replaced = path.with_suffix(".new")
    replaced.write_bytes(path.read_bytes().replace(b'"content":"hi"', b'"content":"HO"'))
    os.replace(replaced, path)  # another inode: what was kept is not this file

    server.enqueue(Reply.text(["two"]))
    post_run(url, run_input("swap", "r2", [{"id": "u2", "role": "user", "content": "again"}]))
    assert server.requests[1].json["messages"][1]["content"] == "HO"


def install_plugin(site: Path) -> None:
    """A distribution with an `agentcli.tools` entry point, as pip would leave it."""
    dist = site / "agentcli_served-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: agentcli-served\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[agentcli.tools]\nserved = agentcli_served\n")
    (site / "agentcli_served.py").write_text(
        "def shout(text: str) -> str:\n    '''Shout the text.'''\n    return text.upper()\n\n\n"
        "def register_tools(register):\n    register(shout, risk='low')\n"
    )


def offered(request: object) -> set[str]:
    return {t["function"]["name"] for t in request.json["tools"]}  # type: ignore[attr-defined]


def test_plugins_installed_while_serve_runs_are_offered_after_a_restart(
    serve, server: ScriptedServer, tmp_path: Path
):
    site = tmp_path / "site"
    site.mkdir()
    # (a __pycache__ written in `site` would count as an installation)
    env = {"PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    url, process = serve(env)
    server.enqueue(Reply.text(["one"]))
    post_run(url, run_input("p1", "r1", [USER]))
    install_plugin(site)

    server.enqueue(Reply.text(["two"]), Reply.text(["three"]))
    post_run(url, run_input("p2", "r1", [USER]))  # a new thread: a session of its own
    post_run(url, run_input("p1", "r2", [{"id": "u2", "role": "user", "content": "again"}]))
    assert [("shout" in offered(r)) for r in server.requests] == [False, False, False]

    process.terminate()
    process.wait(timeout=10)
    again, _ = serve(env)
    server.enqueue(Reply.text(["four"]))
    post_run(again, run_input("p1", "r3", [{"id": "u3", "role": "user", "content": "x"}]))
    assert "shout" in offered(server.requests[3])


def readers_of(process: subprocess.Popen[str], path: Path) -> int:
    """How many of the process's open files are `path`."""
    target = os.path.realpath(path)
    return sum(1 for f in psutil.Process(process.pid).open_files() if f.path == target)


def test_health_answers_while_a_run_reads_a_large_thread(
    serve, server: ScriptedServer, cli_home: Path
):
    url, process = serve()
    server.enqueue(Reply.text(["one"]))
    post_run(url, run_input("big", "r1", [USER]))
    path = thread_file(cli_home, "big")
    line = json.dumps({"t": "event", "e": {"type": "CUSTOM", "name": "n", "value": "v" * 150}})
    with path.open("a", encoding="utf-8") as stream:
        stream.write((line + "\n") * 300_000)  # about 60 MB of lines to read
    process.kill()
    process.wait(timeout=10)

    url, process = serve()  # nothing kept: the run reads the whole file
    server.enqueue(Reply.text(["two"]))
    answered = threading.Event()
    body = run_input("big", "r2", [{"id": "u2", "role": "user", "content": "again"}])
    outcome: dict[str, object] = {}

    def run() -> None:
        headers = {"Accept": "text/event-stream", **AUTH}
        with httpx.stream("POST", url, json=body, headers=headers, timeout=120) as response:
            outcome["before_health"] = not answered.is_set()  # the run's first answer
            outcome["status"] = response.status_code
            response.read()

    poster = threading.Thread(target=run)
    poster.start()
    try:
        # Bound by events: the run has the thread's file open for reading (a second
        # descriptor beside its writer's), then /health is asked.
        while readers_of(process, path) < 2:
            assert poster.is_alive() and process.poll() is None
            time.sleep(0.01)  # a poll interval, not a verdict
        health = httpx.get(url + "health", timeout=60)
        reading = readers_of(process, path)
        answered.set()
    finally:
        poster.join(timeout=120)
    assert health.status_code == 200
    assert reading == 2  # answered while the file was still being read
    assert outcome == {"before_health": False, "status": 200}


def test_copy_ops_past_limits_state_are_refused_and_nothing_grows(serve, server: ScriptedServer):
    url, process = serve()
    state = {"s": "x" * 40}  # about 50 bytes; 20 copies of the whole would be 50 MB
    server.enqueue(Reply.text(["ready"]))
    post_run(url, run_input("st", "r1", [USER], state=state))
    before = psutil.Process(process.pid).memory_info().rss

    patch = [{"op": "copy", "from": "", "path": f"/c{i}"} for i in range(20)]
    server.enqueue(
        Reply.tool_calls([{"id": "c1", "name": "update_state", "arguments": {"patch": patch}}])
    )
    server.enqueue(Reply.text(["too big"]))
    events = post_run(url, run_input("st", "r2", [{"id": "u2", "role": "user", "content": "grow"}]))
    assert not [e for e in events if e["type"] == "STATE_DELTA"]
    result = server.requests[2].json["messages"][-1]
    assert result["role"] == "tool"
    assert "the patch is refused" in result["content"]
    assert "limits.state (4194304 bytes of JSON); nothing changed" in result["content"]
    after = psutil.Process(process.pid).memory_info().rss
    assert after - before < 20 * 1024 * 1024  # the 50 MB state was never built

    server.enqueue(Reply.text(["same"]))
    events = post_run(url, run_input("st", "r3", [{"id": "u3", "role": "user", "content": "?"}]))
    snapshots = [e for e in events if e["type"] == "STATE_SNAPSHOT"]
    assert [e["snapshot"] for e in snapshots] == [state]


def test_limits_state_is_a_setting(serve, server: ScriptedServer, cli_home: Path):
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[limits]\nstate = 2000\n")
    url, _ = serve()
    small = [{"op": "add", "path": "/a", "value": "y" * 500}]
    large = [{"op": "add", "path": "/b", "value": "z" * 2000}]
    calls = [
        {"id": "c1", "name": "update_state", "arguments": {"patch": small}},
        {"id": "c2", "name": "update_state", "arguments": {"patch": large}},
    ]
    server.enqueue(Reply.tool_calls(calls))
    server.enqueue(Reply.text(["done"]))
    events = post_run(url, run_input("lim", "r1", [USER], state={"n": 1}))
    assert [e["delta"] for e in events if e["type"] == "STATE_DELTA"] == [small]
    results = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    assert "new state" in results[0]["content"]
    assert "past limits.state (2000 bytes of JSON)" in results[1]["content"]


def test_the_snapshot_after_many_runs_is_a_fresh_encoding(
    serve, server: ScriptedServer, cli_home: Path
):
    url, process = serve()
    history: list[dict] = []
    for n in range(30):
        if n % 3 == 1:  # a run with a server tool call and its result between the texts
            call = {"id": f"c{n}", "name": "read_file", "arguments": {"path": f"no-{n}.txt"}}
            server.enqueue(Reply.tool_calls([call]))
        server.enqueue(Reply.text([f"answer {n} ✓ \u2028"]))
        message = {"id": f"u{n}", "role": "user", "content": f'message {n} "q"'}
        sent = [*history, message] if n % 2 else [message]  # whole history, or the new one
        # the client's messages from the events, a snapshot taking the place of its own
        history = applied(sent, post_run(url, run_input("many", f"r{n}", sent)), replace=True)
        if n == 20:  # another process's turn, appended to the file: the kept part is extended
            append_line(
                thread_file(cli_home, "many"),
                {"t": "message", "m": {"role": "user", "content": "from elsewhere", "id": "x1"}},
            )
    process.kill()
    process.wait(timeout=10)

    fresh, _ = serve()  # nothing kept: every message encoded anew
    server.enqueue(Reply.text(["last"]))
    last = {"id": "u-last", "role": "user", "content": "last"}
    events = post_run(fresh, run_input("many", "r-last", [last]))  # a reloaded page's
    assert types(events)[1] == "MESSAGES_SNAPSHOT"
    anew = events[1]["messages"]
    assert anew == [*history, last]
    assert sum(1 for m in history if m["role"] == "tool") == 10
    assert "from elsewhere" in [m.get("content") for m in history]
