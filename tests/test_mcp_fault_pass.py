"""A fourth fault pass over MCP servers (issue 40), end to end through `agentcli run` with
the hand-written stdio server (tests/fixtures/mcp/wrong_shapes_server.py):

- a tool schema that refers outside itself (`$ref` to a URL or a file) is refused when the
  tools are listed, with one line: jsonschema would fetch or read it with agentcli's own
  reach (not the server's sandbox) and show what it found to the model; nothing is fetched
  or read, and no secret reaches the model or the server. A `$ref` within the schema still
  works; one that loops is the call's one-line error, never an internal error;
- an answer holding a lone surrogate escape (valid JSON, which pydantic refuses) is read;
- JSON-RPC's generic server error (-32000, which the SDK also uses for a closed
  connection) is the server's answer, not its death: it is not restarted or switched off;
- a result against the tool's outputSchema is one line, not jsonschema's report;
- a server error's newline never starts a stderr line of its own."""

from __future__ import annotations

import http.server
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCli
from tests.fixtures.mcp.wrong_shapes_server import FAULT_CALLS, FAULT_FRAMES, INIT_ERROR, REFS
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_sessions import warning_lines
from tests.test_mcp import toml_str, tool_messages, write_config

pytest.importorskip("mcp")
SERVER = Path(__file__).parent / "fixtures" / "mcp" / "wrong_shapes_server.py"
SECRET = "TOPSECRET-7731"


def configure(cli_home: Path, shape: str, *extra: str) -> None:
    args = json.dumps([str(SERVER), shape, *extra])
    write_config(
        cli_home,
        f"[mcp.servers.w]\ncommand = {toml_str(sys.executable)}\nargs = {args}\n"
        "trusted = true\ntool_timeout = 60\nstart_timeout = 60\n",
    )


def run_calls(
    run_cli: RunCli, server: ScriptedServer, texts: tuple[str, ...] = ("hi",), *, steps: int = 1
) -> Any:
    """One run whose model calls echo with each of `texts` (all at once, or one a step)."""
    calls = [
        {"id": f"call_{n}", "name": "mcp__w__echo", "arguments": {"text": text}}
        for n, text in enumerate(texts, 1)
    ]
    if steps == 1:
        server.enqueue(Reply.tool_calls(calls))
    else:
        for call in calls:
            server.enqueue(Reply.tool_calls([call]))
    server.enqueue(Reply.text(["done"]))
    result = run_cli(["run", "--yes", "go"], server=server, timeout=120)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return result


def only_result(run_cli: RunCli, server: ScriptedServer, cli_home: Path, shape: str) -> str:
    """The one tool result the model got from a run against `shape` (the run finishes)."""
    configure(cli_home, shape)
    result = run_calls(run_cli, server)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"
    (message,) = tool_messages(server, 1)
    return message["content"]


class Watched(http.server.BaseHTTPRequestHandler):
    """A loopback server a schema's `$ref` names: it must never be asked."""

    asked: list[str] = []  # noqa: RUF012

    def do_GET(self) -> None:
        Watched.asked.append(self.path)
        body = json.dumps({"enum": [SECRET]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/schema+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def watched_url() -> Iterator[str]:
    Watched.asked = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Watched)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/schema.json"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("shape", ["schema-ref-outside", "output-schema-ref-outside"])
@pytest.mark.parametrize("target", ["url", "file"])
def test_a_schema_referring_outside_itself_is_refused_and_nothing_is_fetched(
    run_cli: RunCli,
    server: ScriptedServer,
    cli_home: Path,
    tmp_path: Path,
    watched_url: str,
    shape: str,
    target: str,
) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"enum": [SECRET]}), encoding="utf-8")
    ref = watched_url if target == "url" else secret.as_uri()
    configure(cli_home, shape, ref)
    result = run_calls(run_cli, server)
    assert result.returncode == 0, result.stderr
    warned = [line for line in warning_lines(result.stderr) if "refers outside itself" in line]
    assert len(warned) == 1, result.stderr
    assert "mcp__w__echo" in warned[0] and "$ref" in warned[0]
    assert Watched.asked == []  # never fetched
    sent = json.dumps([request.json for request in server.requests])
    assert SECRET not in sent and SECRET not in result.stderr + result.stdout
    assert "mcp__w__echo" not in [t["function"]["name"] for t in server.requests[0].json["tools"]]


def test_a_ref_within_the_schema_still_checks_the_arguments(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    configure(cli_home, "schema-ref-within")
    server.enqueue(
        Reply.tool_calls([{"id": "c1", "name": "mcp__w__echo", "arguments": {"text": 5}}]),
        Reply.tool_calls([{"id": "c2", "name": "mcp__w__echo", "arguments": {"text": "hi"}}]),
        Reply.text(["done"]),
    )
    result = run_cli(["run", "--yes", "go"], server=server, timeout=120)
    assert result.returncode == 0, result.stderr
    refused = tool_messages(server, 1)[0]["content"]
    assert "5 is not of type 'string'" in refused
    assert tool_messages(server, 2)[-1]["content"] == "echo: hi"


def test_a_schema_that_refers_to_itself_without_end_is_the_calls_one_line_error(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    content = only_result(run_cli, server, cli_home, "schema-ref-loop")
    assert "cannot be checked" in content and "\n" not in content


def test_an_answer_with_a_lone_surrogate_escape_is_read_not_waited_for(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    assert only_result(run_cli, server, cli_home, "text-lone-surrogate") == "echo: a\ufffdb"


def test_a_generic_server_error_is_its_answer_not_its_death(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    configure(cli_home, "error-code-32000")
    result = run_calls(run_cli, server, ("one", "two"), steps=2)
    assert result.returncode == 0, result.stderr
    for index in (1, 2):
        content = tool_messages(server, index)[-1]["content"]
        assert "the server answered: disk full" in content, content
    assert "stopped during the call" not in result.stderr
    assert "stays down" not in result.stderr


def test_a_result_against_the_output_schema_is_one_line(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    content = only_result(run_cli, server, cli_home, "result-against-output-schema")
    assert "does not match its outputSchema" in content and "\n" not in content
    assert "RuntimeError" not in content


def test_a_start_error_with_a_newline_is_one_stderr_line_without_a_sandbox_hint(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    configure(cli_home, INIT_ERROR)
    server.enqueue(Reply.text(["done"]))
    result = run_cli(["run", "--yes", "go"], server=server, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert not any(line.startswith("agentcli: error:") for line in lines), result.stderr
    (warned,) = [line for line in lines if "did not start" in line]
    assert "no licence\\nagentcli: error: a line the server wrote" in warned
    assert "sandbox" not in warned  # the server answered: no profile changes its answer


def test_the_fault_pass_shapes_are_all_tested() -> None:
    tested = {
        "schema-ref-outside",
        "output-schema-ref-outside",
        "schema-ref-within",
        "schema-ref-loop",
        "result-against-output-schema",
        "text-lone-surrogate",
        "error-code-32000",
        "is-error-null",
    }
    assert {*REFS, *FAULT_CALLS, *FAULT_FRAMES} == tested


def test_a_wrong_shape_of_a_result_is_named_by_its_request_not_by_pydantics_union(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    content = only_result(run_cli, server, cli_home, "is-error-null")
    assert "its tools/call answer does not match MCP's schema: isError" in content, content
    assert "union[" not in content


@pytest.mark.parametrize("kind", ["a directory", "not executable"])
def test_a_command_that_is_no_program_says_what_it_is(
    run_cli: RunCli, cli_home: Path, tmp_path: Path, kind: str
) -> None:
    command = tmp_path / "server"
    if kind == "a directory":
        command.mkdir()
    else:
        command.write_text("#!/bin/sh\n", encoding="utf-8")
        command.chmod(0o644)
    write_config(cli_home, f"[mcp.servers.w]\ncommand = {toml_str(str(command))}\n")
    result = run_cli(["mcp", "list"])
    assert "Traceback" not in result.stderr
    said = "is a directory, not a program" if kind == "a directory" else "is not executable"
    assert f"{command} {said}" in result.stdout, result.stdout
    assert "not found" not in result.stdout


@pytest.mark.parametrize(
    ("shape", "said"),
    [("tools-pages-loop", "cursor 'again' again"), ("tools-pages-grow", "more than 1000")],
)
def test_tools_list_pages_that_never_end_are_one_line_not_a_timeout(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, shape: str, said: str
) -> None:
    configure(cli_home, shape)
    server.enqueue(Reply.text(["done"]))
    result = run_cli(["run", "--yes", "go"], server=server, timeout=120)
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in warning_lines(result.stderr) if "did not start" in line]
    assert f"its tools/list pages do not end ({said})" in line
    assert "no answer within" not in line and "sandbox" not in line
