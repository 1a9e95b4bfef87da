"""MCP servers nobody here wrote (`mcp-server-time`, `mcp-server-git` from PyPI), driven end
to end through `agentcli run` against the scripted model server: tool names, risk from trust
and annotations, results, errors, a server that fails to start, a server killed mid-run,
an untrusted workspace's servers, a 401, and `agentcli mcp add | remove | list`."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.conftest import RunCli, StartCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer
from tests.test_repl import CTRL_D, StartChat, chat  # noqa: F401 (the `chat` fixture)

pytest.importorskip("mcp")
BIN = Path(sys.executable).parent
TIME_SERVER = BIN / "mcp-server-time"
GIT_SERVER = BIN / "mcp-server-git"
FETCH_SERVER = BIN / "mcp-server-fetch"
needs_time = pytest.mark.skipif(not TIME_SERVER.exists(), reason="mcp-server-time not installed")
needs_git = pytest.mark.skipif(not GIT_SERVER.exists(), reason="mcp-server-git not installed")
needs_fetch = pytest.mark.skipif(not FETCH_SERVER.exists(), reason="mcp-server-fetch not installed")


def toml_str(text: str) -> str:
    return json.dumps(text)


def write_config(cli_home: Path, text: str) -> Path:
    path = cli_home / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def time_server(extra: str = "", name: str = "time") -> str:
    return f"[mcp.servers.{name}]\ncommand = {toml_str(str(TIME_SERVER))}\n{extra}\n"


def tool_messages(server: ScriptedServer, index: int) -> list[dict[str, Any]]:
    return [m for m in server.requests[index].json["messages"] if m["role"] == "tool"]


def sent_tools(server: ScriptedServer, index: int = 0) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in server.requests[index].json["tools"]}


def now_call(call_id: str = "call_t", zone: str = "UTC") -> dict[str, Any]:
    return {"id": call_id, "name": "mcp__time__get_current_time", "arguments": {"timezone": zone}}


def answered_zone(server: ScriptedServer, index: int = 1) -> str:
    """The time zone in the one tool result the model got at request `index`."""
    [message] = tool_messages(server, index)
    return json.loads(message["content"])["timezone"]


def events_of(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


# --- tools, names, risk


@needs_time
def test_untrusted_server_tools_are_high_risk_and_denied_without_a_person(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    write_config(cli_home, time_server())
    server.enqueue(Reply.tool_calls([now_call()]), Reply.text(["No time."]))
    result = run_cli(["run", "what time is it?"], server=server, timeout=90)

    assert result.returncode == 4, result.stderr  # denied
    tools = sent_tools(server)
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= set(tools)
    assert "timezone" in json.dumps(tools["mcp__time__get_current_time"]["parameters"])
    [message] = tool_messages(server, 1)
    assert message["content"].startswith("denied"), message


@needs_time
def test_an_allow_rule_with_a_glob_runs_the_tool_and_the_model_gets_its_text(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    write_config(cli_home, time_server())
    server.enqueue(Reply.tool_calls([now_call(zone="Europe/Paris")]), Reply.text(["Done."]))
    result = run_cli(
        ["run", "time in Paris?", "--allow", "mcp__time__*"], server=server, timeout=90
    )

    assert result.returncode == 0, result.stderr
    assert answered_zone(server) == "Europe/Paris"


@needs_time
def test_trusted_server_annotations_make_read_only_tools_low_risk_and_errors_are_results(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    write_config(cli_home, time_server("trusted = true"))
    server.enqueue(
        Reply.tool_calls([now_call("call_ok"), now_call("call_bad", zone="Nowhere/Atlantis")]),
        Reply.text(["Done."]),
    )
    result = run_cli(["run", "time?", "-o", "jsonl"], server=server, timeout=90)

    assert result.returncode == 0, result.stderr
    good, bad = tool_messages(server, 1)
    assert json.loads(good["content"])["timezone"] == "UTC"
    assert "Nowhere/Atlantis" in bad["content"]
    results = {
        e["toolCallId"]: e for e in events_of(result.stdout) if e["type"] == "TOOL_CALL_RESULT"
    }
    assert "error" in results["call_bad"]["metadata"]  # isError is an error result
    assert "error" not in results["call_ok"]["metadata"]
    approvals = [e["value"] for e in events_of(result.stdout) if e.get("name") == "approval"]
    assert {a["risk"] for a in approvals} == {"low"}


@needs_time
def test_a_per_tool_risk_overrides_the_server(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    write_config(cli_home, time_server('[mcp.servers.time.tools.get_current_time]\nrisk = "low"'))
    server.enqueue(Reply.tool_calls([now_call()]), Reply.text(["Done."]))
    result = run_cli(["run", "time?"], server=server, timeout=90)
    assert result.returncode == 0, result.stderr
    assert answered_zone(server) == "UTC"


@needs_git
def test_git_server_reads_the_workspace_repository(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git not installed")
    subprocess.run([git, "init", "-q", str(workspace)], check=True)
    write_config(
        cli_home,
        f"[mcp.servers.git]\ncommand = {toml_str(str(GIT_SERVER))}\n"
        'args = ["--repository", "."]\n'
        '[mcp.servers.git.tools.git_status]\nrisk = "low"\n',
    )
    call = {"id": "call_g", "name": "mcp__git__git_status", "arguments": {"repo_path": "."}}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["Clean."]))
    result = run_cli(["run", "git status?"], server=server, timeout=90)

    assert result.returncode == 0, result.stderr
    [message] = tool_messages(server, 1)
    assert "README.md" in message["content"], message  # untracked in the new repository
    assert {"mcp__git__git_log", "mcp__git__git_diff"} <= set(sent_tools(server))


# --- failures


@needs_time
def test_a_server_that_fails_is_reported_once_and_the_others_go_on(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    broken = '[mcp.servers.broken]\ncommand = "agentcli-no-such-program"\n'
    exits = (
        f"[mcp.servers.quits]\ncommand = {toml_str(sys.executable)}\n"
        'args = ["-c", "import sys; sys.stderr.write(\'cannot start: no database\'); '
        'sys.exit(3)"]\n'
    )
    write_config(cli_home, time_server("trusted = true") + broken + exits)
    server.enqueue(Reply.tool_calls([now_call()]), Reply.text(["Done."]))
    result = run_cli(["run", "time?"], server=server, timeout=90)

    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "did not start" in line]
    assert len(lines) == 2, result.stderr
    [broken_line] = [line for line in lines if "broken" in line]
    assert "program not found: agentcli-no-such-program" in broken_line
    [quits_line] = [line for line in lines if "quits" in line]
    assert "cannot start: no database" in quits_line
    assert not any(name.startswith(("mcp__broken", "mcp__quits")) for name in sent_tools(server))
    assert answered_zone(server) == "UTC"


@needs_time
def test_a_bad_server_table_is_one_config_error(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    write_config(cli_home, '[mcp.servers.both]\ncommand = "x"\nurl = "http://127.0.0.1:1/"\n')
    result = run_cli(["run", "hi"], server=server)
    assert result.returncode == 2
    assert_one_error(result, "mcp.servers.both", "either command")


@needs_time
def test_a_server_killed_mid_run_gives_an_error_result_and_is_restarted_at_the_next_call(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    """run_shell kills the time server between two calls; the call after it restarts it."""
    write_config(cli_home, time_server("trusted = true"))
    kill = (  # the time servers started in this workspace, none of anyone else's
        "import psutil, os, signal\n"
        "for p in psutil.process_iter(['cmdline', 'cwd']):\n"
        "    if p.info['cwd'] == os.getcwd() and 'mcp-server-time' in str(p.info['cmdline']):\n"
        "        os.kill(p.pid, signal.SIGKILL); print('killed', p.pid)\n"
    )
    (workspace / "kill_time.py").write_text(kill, encoding="utf-8")
    server.enqueue(
        Reply.tool_calls([now_call("call_1")]),
        Reply.tool_calls(
            [
                {
                    "id": "call_k",
                    "name": "run_shell",
                    "arguments": {"command": f"{sys.executable} kill_time.py"},
                }
            ]
        ),
        Reply.tool_calls([now_call("call_2")]),
        Reply.text(["Done."]),
    )
    # --sandbox none: the sandbox would (rightly) keep run_shell from seeing or killing it
    result = run_cli(
        ["run", "time twice", "--yes", "--sandbox", "none"], server=server, timeout=120
    )

    assert result.returncode == 0, result.stderr
    assert "killed" in tool_messages(server, 2)[-1]["content"]
    last = tool_messages(server, 3)[-1]
    assert json.loads(last["content"])["timezone"] == "UTC", last


@needs_time
def test_exit_ends_every_server_process(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    write_config(cli_home, time_server() + time_server(name="time2"))
    server.enqueue(Reply.text(["Hello."]))
    result = run_cli(["run", "hi"], server=server, timeout=90)
    assert result.returncode == 0, result.stderr
    assert {"mcp__time__get_current_time", "mcp__time2__get_current_time"} <= set(
        sent_tools(server)
    )
    assert _servers_in(workspace) == []


def _servers_in(workspace: Path) -> list[int]:
    """MCP servers running in this workspace (none of anyone else's), not counting the
    sandbox's keeper or bubblewrap, whose command lines name the server too."""
    found = []
    for process in psutil.process_iter(["cmdline", "cwd"]):
        cmdline = process.info["cmdline"] or []
        keeper = cmdline[1:4] == ["-I", "-S", "-c"] or (
            cmdline[:1] and cmdline[0].endswith("bwrap")
        )
        if keeper:
            continue
        if process.info["cwd"] == str(workspace.resolve()) and "mcp-server" in str(cmdline):
            found.append(process.pid)
    return found


# --- trust


@needs_time
def test_an_untrusted_workspace_s_servers_wait_until_it_is_trusted(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    project = workspace / ".agentcli" / "config.toml"
    project.parent.mkdir()
    project.write_text(time_server("trusted = true"), encoding="utf-8")
    server.enqueue(Reply.text(["Hello."]), Reply.text(["Again."]), Reply.text(["Trusted."]))

    first = run_cli(["run", "hi"], server=server, timeout=90)
    assert first.returncode == 0, first.stderr
    assert "not trusted" in first.stderr and "mcp.servers.time" in first.stderr
    assert not any(name.startswith("mcp__") for name in sent_tools(server, 0))
    second = run_cli(["run", "hi"], server=server, timeout=90)
    assert "not trusted" not in second.stderr  # said once
    listing = run_cli(["mcp", "list", "--json"])
    [row] = json.loads(listing.stdout)["servers"]
    assert (row["name"], row["state"]) == ("time", "waiting for trust")

    assert run_cli(["trust"]).returncode == 0
    third = run_cli(["run", "hi"], server=server, timeout=90)
    assert third.returncode == 0, third.stderr
    assert "mcp__time__get_current_time" in sent_tools(server, 2)


# --- HTTP


class _Unauthorized(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="test"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def refusing_server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorized)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
    httpd.shutdown()
    httpd.server_close()


def remote_server(cli_home: Path, server: ScriptedServer, url: str) -> None:
    write_config(
        cli_home,
        f"[mcp.servers.remote]\nurl = {toml_str(url)}\n"
        'headers = {Authorization = "Bearer ${REMOTE_TOKEN}"}\n',
    )
    server.enqueue(Reply.text(["Hello."]))


def test_a_401_is_one_clear_line(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, refusing_server: str
) -> None:
    remote_server(cli_home, server, refusing_server)
    result = run_cli(["run", "hi"], server=server, env={"REMOTE_TOKEN": "wrong"}, timeout=90)
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stderr.splitlines() if "remote" in line]
    assert "401 Unauthorized" in line and "mcp.servers.remote.headers" in line, line


def test_a_header_variable_that_is_not_set_is_said(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, refusing_server: str
) -> None:
    remote_server(cli_home, server, refusing_server)
    result = run_cli(["run", "hi"], server=server, env={"REMOTE_TOKEN": None}, timeout=90)
    assert result.returncode == 0, result.stderr
    assert "needs the variable REMOTE_TOKEN, which is not set" in result.stderr


# --- the environment a server gets


def test_a_server_gets_only_the_variables_named(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    """A stand-in server that writes its environment and exits (so it 'fails to start')."""
    dump = "import os, json; json.dump(dict(os.environ), open('env.json', 'w'))"
    write_config(
        cli_home,
        f"[mcp.servers.envdump]\ncommand = {toml_str(sys.executable)}\n"
        f"args = ['-c', {toml_str(dump)}]\nenv = ['PASSED_ON']\nsandbox = 'workspace-write'\n",
    )
    server.enqueue(Reply.text(["Hello."]))
    result = run_cli(
        ["run", "hi"],
        server=server,
        env={"PASSED_ON": "yes", "OPENAI_API_KEY": "sk-secret", "OTHER_THING": "no"},
        timeout=90,
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads((workspace / "env.json").read_text(encoding="utf-8"))
    assert seen["PASSED_ON"] == "yes"
    assert "OPENAI_API_KEY" not in seen and "OTHER_THING" not in seen
    assert "sk-secret" not in json.dumps(seen)


if os.name != "posix":  # pragma: no cover
    pytest.skip("process trees are POSIX here", allow_module_level=True)


# --- agentcli mcp add | remove | list


@needs_time
def test_mcp_add_list_remove_edit_the_user_config(run_cli: RunCli, cli_home: Path) -> None:
    added = run_cli(
        [
            "mcp",
            "add",
            "time",
            "--env",
            "TZ_HINT",
            "--",
            str(TIME_SERVER),
            "--local-timezone",
            "UTC",
        ]
    )
    assert added.returncode == 0, added.stderr
    assert run_cli(["mcp", "add", "nothing", "--", "agentcli-no-such-program"]).returncode == 0
    web = ["mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp", "--header", "X-Key: ${WEB_KEY}"]
    assert run_cli(web).returncode == 0
    text = (cli_home / "agentcli" / "config.toml").read_text(encoding="utf-8")
    assert "[mcp.servers.time]" in text and '"--local-timezone", "UTC"' in text
    assert 'env = ["TZ_HINT"]' in text and "${WEB_KEY}" in text

    listing = run_cli(["mcp", "list", "--json"], env={"WEB_KEY": "k"}, timeout=90)
    assert listing.returncode == 0, listing.stderr
    rows = {row["name"]: row for row in json.loads(listing.stdout)["servers"]}
    assert rows["time"]["state"] == "running"
    assert {t["name"]: t["risk"] for t in rows["time"]["tools"]} == {
        "mcp__time__get_current_time": "high",
        "mcp__time__convert_time": "high",
    }
    assert rows["nothing"]["state"] == "failed"
    assert "program not found" in rows["nothing"]["error"]
    assert rows["web"]["state"] == "failed" and "cannot reach" in rows["web"]["error"]

    text_listing = run_cli(["mcp", "list"], env={"WEB_KEY": "k"}, timeout=90)
    assert "tools: mcp__time__get_current_time (high)" in text_listing.stdout

    assert run_cli(["mcp", "remove", "nothing"]).returncode == 0
    again = run_cli(["mcp", "remove", "nothing"])
    assert again.returncode == 2
    assert_one_error(again, "no MCP server 'nothing'")
    assert "[mcp.servers.nothing]" not in (cli_home / "agentcli" / "config.toml").read_text()


def test_mcp_add_refuses_what_cannot_work(run_cli: RunCli, cli_home: Path) -> None:
    for args, needle in [
        (["mcp", "add", "x"], "after --"),
        (["mcp", "add", "x", "--url", "http://127.0.0.1:9/", "--", "prog"], "after --"),
        (["mcp", "add", "a__b", "--", "prog"], "no '__'"),
        (["mcp", "add", "x", "--env", "A=secret", "--", "prog"], "not a variable name"),
        (["mcp", "add", "x", "--url", "ftp://h/"], "http:// or https://"),
    ]:
        result = run_cli(args)
        assert result.returncode == 2, (args, result.stderr)
        assert_one_error(result, needle)
    assert not (cli_home / "agentcli" / "config.toml").exists()


def test_ctrl_c_while_a_server_starts_ends_at_once_and_leaves_no_process(
    start_cli: StartCli, server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    """A server that never answers the handshake (and ignores SIGTERM): SIGINT during the
    start ends agentcli within seconds, and the server process with it."""
    hang = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"
    write_config(
        cli_home,
        f"[mcp.servers.hangs]\ncommand = {toml_str(sys.executable)}\n"
        f"args = ['-c', {toml_str(hang)}, 'mcp-server-hangs']\n",
    )
    process = start_cli(["run", "hi"], server=server)
    deadline = time.monotonic() + 60
    while not _servers_in(workspace) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _servers_in(workspace), "the server never started"
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert time.monotonic() - started < 10, stderr
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    deadline = time.monotonic() + 5
    while _servers_in(workspace) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _servers_in(workspace) == []
    assert server.requests == []  # the turn ended before any request


@needs_time
def test_repl_keeps_its_servers_across_clear_and_stops_them_at_exit(
    chat: StartChat,  # noqa: F811 (the fixture imported above)
    cli_home: Path,
    workspace: Path,
) -> None:
    write_config(cli_home, time_server())
    session = chat()
    deadline = time.monotonic() + 60
    while not (first := _servers_in(workspace)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(first) == 1, "the server did not start"
    session.command("/clear", "new conversation")
    time.sleep(1)
    assert _servers_in(workspace) == first  # the same process: not restarted
    session.send(CTRL_D)
    assert session.exit_status(timeout=30) == 0
    deadline = time.monotonic() + 5
    while _servers_in(workspace) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _servers_in(workspace) == []


@needs_fetch
def test_a_trusted_fetch_server_is_as_risky_as_the_built_in_fetch(
    run_cli: RunCli, cli_home: Path
) -> None:
    """mcp-server-fetch says its `fetch` is read-only and reaches the open world
    (`openWorldHint`): trusted, it is medium, like `fetch_url`, not low."""
    write_config(
        cli_home,
        f"[mcp.servers.fetch]\ncommand = {toml_str(str(FETCH_SERVER))}\ntrusted = true\n"
        'sandbox = "network"\n',
    )
    listed = run_cli(["tools", "list", "--json"], timeout=90)
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["mcp__fetch__fetch"]["state"] == "running", rows["mcp__fetch__fetch"]
    assert rows["mcp__fetch__fetch"]["risk"] == "medium"  # read-only alone would be low
    assert rows["fetch_url"]["risk"].startswith("medium")
