"""Text at every edge (agentcli.text.decoding): bytes that are not UTF-8 and lone surrogates,
fed through file names, file contents, argv, the environment, the model's stream and the
session file, never become an internal error; names come back to the same file.

The properties run on the parts with arbitrary input; the end-to-end tests drive the
installed CLI against the scripted model with the nastiest cases of each edge."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agentcli.output.visible import name_on_one_line
from agentcli.sessions.store import record_line
from agentcli.text import decoding
from agentcli.workspace.root import Workspace
from tests.conftest import RunCli, assert_no_traceback
from tests.replying_server import ReplyingServer
from tests.scripted_server import RecordedRequest, Reply, ScriptedServer
from tests.test_e2e_sessions import only_session, records

# Every code point, lone surrogates included (hypothesis leaves them out by default).
ANY_CHAR = st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr))
ANY_TEXT = st.text(ANY_CHAR, max_size=60)
SURROGATE = re.compile("[\ud800-\udfff]")


def writable_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# --- the parts, with arbitrary input


@settings(max_examples=400, deadline=None)
@given(ANY_TEXT)
def test_every_string_is_shown_as_writable_text(text: str) -> None:
    shown = decoding.shown(text)
    assert writable_text(shown)
    if not SURROGATE.search(text):
        assert shown == text  # clean text is left alone
    assert decoding.encoded(text) == shown.encode("utf-8")


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=200))
def test_contents_of_any_bytes_are_writable(data: bytes) -> None:
    text = decoding.contents(data)
    assert writable_text(text)
    try:
        assert text == data.decode("utf-8")  # UTF-8 itself is kept exactly
    except UnicodeDecodeError:
        assert "\ufffd" in text


def plain_name(name: bytes) -> bool:
    """A name the file system takes, and not the one kind `os_path` cannot tell apart (a
    literal `\\xHH` beside a byte that is not UTF-8, in one component). A leading `~` is
    the home directory, as in a shell."""
    if name in (b".", b"..") or b"/" in name or b"\0" in name or name.startswith(b"~"):
        return False
    literal = re.search(rb"\\x[89a-fA-F][0-9a-fA-F]", name) is not None
    try:
        name.decode("utf-8")
    except UnicodeDecodeError:
        return not literal
    return True


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.binary(min_size=1, max_size=40), st.binary(min_size=1, max_size=20))
def test_a_shown_name_opens_the_same_file(tmp_path: Path, directory: bytes, name: bytes) -> None:
    assume(plain_name(directory) and plain_name(name))
    root = os.fsencode(tmp_path)
    os.makedirs(os.path.join(root, directory), exist_ok=True)
    target = os.path.join(root, directory, name)
    with open(target, "wb") as stream:
        stream.write(b"x")
    try:
        relative = decoding.shown_bytes(directory + b"/" + name)
        assert writable_text(relative)
        resolved = Workspace(tmp_path).resolve(relative)
        assert os.path.samefile(resolved.path, target), (relative, resolved.path)
    finally:
        os.unlink(target)


def test_a_real_name_that_spells_an_escape_wins(tmp_path: Path) -> None:
    (tmp_path / "a\\xffb").write_text("literal")
    with open(os.fsencode(tmp_path) + b"/a\xffb", "w") as stream:
        stream.write("byte")
    workspace = Workspace(tmp_path)
    assert workspace.resolve("a\\xffb").path.read_text() == "literal"
    with open(os.fsencode(tmp_path) + b"/c\xfed", "w") as stream:
        stream.write("only the byte")
    assert workspace.resolve("c\\xfed").path.read_text() == "only the byte"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES)
def test_json_from_outside_holds_no_lone_surrogate(value: Any) -> None:
    text = json.dumps(value)  # ASCII: lone surrogates as \udXXX escapes, as a server may send
    parsed = decoding.loads(text)
    assert writable_text(json.dumps(parsed, ensure_ascii=False))
    if not SURROGATE.search(json.dumps(value, ensure_ascii=False, default=str)):
        assert parsed == value


def _parsed(text: str, **options: Any) -> tuple[str, str]:
    try:
        return "value", repr(decoding.loads(text, **options))
    except ValueError as error:
        return type(error).__name__, str(error)


JSON_TEXTS = st.one_of(
    st.builds(
        lambda before, value, after: before + json.dumps(value) + after,
        st.sampled_from(["", " ", "\n\t", "\ufeff", "x"]),
        JSON_VALUES | st.floats() | st.integers(min_value=2**63, max_value=2**80),
        st.sampled_from(["", " ", "\r\n", "x", "]", "1", ", 2"]),
    ),
    st.text(ANY_CHAR, max_size=20),  # mostly not JSON at all
)


@settings(max_examples=300, deadline=None)
@given(JSON_TEXTS)
def test_a_text_parses_to_what_json_loads_makes_of_it(text: str) -> None:
    """The short path for text (the decoder's raw_decode) gives json.loads's value or its
    error, word for word; an option (here one that changes nothing) takes json.loads."""
    assert _parsed(text) == _parsed(text, parse_constant=None)


def _refuse(name: str) -> Any:
    raise decoding.NotJson(name)


@settings(max_examples=300, deadline=None)
@given(JSON_TEXTS)
def test_a_finite_parse_is_json_loads_refusing_nan_and_the_infinities(text: str) -> None:
    """`finite=True` (a model's stream) on text and bytes: json.loads's value or error, and
    NaN, Infinity and -Infinity refused as not JSON, through its own short path too."""
    assert _parsed(text, finite=True) == _parsed(text, parse_constant=_refuse)
    data: Any = text.encode("utf-8", "surrogatepass")  # json.loads reads a BOM of bytes
    assert _parsed(data, finite=True) == _parsed(data, parse_constant=_refuse)


def test_json_nested_too_deeply_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="nested too deeply"):
        decoding.loads("[" * 100_000)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(ANY_TEXT, JSON_VALUES, max_size=4))
def test_the_session_writer_writes_any_record(record: dict[str, Any]) -> None:
    line = record_line({"t": "event", "e": record})
    text = line.decode("utf-8")  # valid UTF-8, whatever the record held
    assert text.endswith("\n") and text.count("\n") == 1
    assert not SURROGATE.search(json.dumps(json.loads(text), ensure_ascii=False))


@settings(max_examples=200, deadline=None)
@given(ANY_TEXT)
def test_a_guarded_stream_writes_any_string(text: str) -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", errors="strict")
    decoding.guard_stream(stream)
    stream.write(text)
    stream.flush()
    assert raw.getvalue().decode("utf-8") == decoding.shown(text)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40))
def test_a_model_chunk_holding_any_bytes_is_an_error_or_writable_events(data: bytes) -> None:
    """Bytes from a model's stream, as the SSE reader decodes them, inside a delta."""
    from agentcli.errors import ProviderError
    from agentcli.providers.openai import _parse_chunk
    from agentcli.providers.openai_stream import ChatStreamAccumulator

    line = b'{"choices": [{"index": 0, "delta": {"content": "' + data + b'"}}]}'
    try:
        chunk = _parse_chunk(decoding.contents(line), "the server")
    except ProviderError:
        return  # one clear error: the line is not JSON
    for event in ChatStreamAccumulator("openai", "m").feed(chunk):
        assert writable_text(json.dumps(event.to_wire(), ensure_ascii=False))


# --- end to end: each edge through the installed CLI

NAME_COLUMN = 38  # where list_directory's lines show the name
NAMES = [b"caf\xe9.txt", b"\xff\xfe", b"half\xed\xa0\x80surrogate", b"wide\xe4\xb8.md"]


class ListThenRead(ReplyingServer):
    """Lists the workspace's `sub` (or searches it, with `search=True`), then reads back
    every file it was told about, by the names the listing gave, in one step."""

    def __init__(self, search: bool = False) -> None:
        super().__init__()
        self.search = search

    def reply_for(self, request: RecordedRequest) -> Reply:
        messages = request.json["messages"]
        tools = [m for m in messages if m["role"] == "tool"]
        if not tools:
            if self.search:
                call = {"name": "search_content", "arguments": {"pattern": "needle"}}
            else:
                call = {"name": "list_directory", "arguments": {"path": "sub"}}
            return Reply.tool_calls([{"id": "call_list", **call}])
        if len(tools) == 1:
            lines = tools[0]["content"].split("\n")
            if self.search:  # `PATH:LINE:TEXT` under `N matches in M files`
                names = [line.rsplit(":", 2)[0] for line in lines[1:] if line]
            else:  # entries under the header and the column titles
                names = ["sub/" + line[NAME_COLUMN:] for line in lines[2:]]
            reads = [
                {"id": f"call_read_{n}", "name": "read_file", "arguments": {"path": name}}
                for n, name in enumerate(names)
            ]
            return Reply.tool_calls(reads)
        return Reply.text(["done"])


def read_back(run_cli: RunCli, names: list[bytes], search: bool = False) -> list[str]:
    """What the model got from reading back each of `names` (files in the workspace's
    `sub`), by the names a listing (or a search) showed it."""
    with ListThenRead(search) as server:
        result = run_cli(["run", "--yes", "read them"], server=server)
        assert result.returncode == 0, result.stderr
        tools = [m for m in server.requests[-1].json["messages"] if m["role"] == "tool"]
    listed, reads = tools[0]["content"], [m["content"] for m in tools[1:]]
    for name in names:
        assert decoding.shown_bytes(name) in listed, (name, listed)
    assert len(reads) == len(names), reads
    return reads


@pytest.mark.parametrize("search", [False, True], ids=["list_directory", "search_content"])
def test_names_that_are_not_utf8_are_listed_and_read_back(
    run_cli: RunCli, workspace: Path, cli_home: Path, search: bool
) -> None:
    sub = os.fsencode(workspace / "sub")
    os.mkdir(sub)
    for name in NAMES:
        with open(os.path.join(sub, name), "wb") as stream:
            stream.write(b"needle in \xff " + name + b"\n")
    for read in read_back(run_cli, NAMES, search):
        assert "needle in \ufffd " in read, read  # each file, its text shown
    records(only_session(cli_home))  # every line valid UTF-8 JSON


def listed_name(name: bytes) -> bool:
    """A plain name that a listing shows as it is, on one line, not hidden: a name with a
    line end (`\n`, `\v`, `\r`, ...) is listed by its escape (name_on_one_line)."""
    shown = decoding.shown_bytes(name)
    return plain_name(name) and not name.startswith(b".") and name_on_one_line(shown) == shown


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.binary(min_size=1, max_size=12).filter(listed_name))
def test_any_name_is_listed_and_read_back_through_the_cli(
    run_cli: RunCli, workspace: Path, name: bytes
) -> None:
    sub = os.fsencode(workspace / "sub")
    os.makedirs(sub, exist_ok=True)
    for old in os.listdir(sub):
        os.unlink(os.path.join(sub, old))
    with open(os.path.join(sub, name), "wb") as stream:
        stream.write(b"needle\n")
    [read] = read_back(run_cli, [name])
    assert "     1\tneedle" in read, (name, read)


def test_a_prompt_argument_that_is_not_utf8(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "read caf\udce9.txt"], server=server)  # argv gets byte 0xE9
    assert result.returncode == 0, result.stderr
    assert server.requests[0].json["messages"][-1]["content"] == "read caf\\xe9.txt"
    stored = [r["m"] for r in records(only_session(cli_home)) if r.get("t") == "message"]
    assert stored[0]["content"] == "read caf\\xe9.txt"


def test_a_workspace_whose_name_is_not_utf8(
    run_cli: RunCli, server: ScriptedServer, tmp_path: Path, cli_home: Path
) -> None:
    odd = tmp_path / "w\udce9s"  # the bytes w, 0xE9, s
    odd.mkdir()
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "hi"], server=server, cwd=odd)
    assert result.returncode == 0, result.stderr
    assert "w\\xe9s" in server.requests[0].json["messages"][0]["content"]
    header = records(only_session(cli_home))[0]
    assert header["workspace"].endswith("w\\xe9s")


@pytest.mark.parametrize(
    ("variable", "value", "needle"),
    [
        ("OPENAI_API_KEY", "k\udcffey", "OPENAI_API_KEY holds characters"),
        ("OPENAI_API_KEY", "ключ", "OPENAI_API_KEY holds characters"),
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/\udcff", "OPENAI_BASE_URL holds bytes"),
    ],
    ids=["key-bytes", "key-letters", "base-url"],
)
def test_environment_values_that_cannot_go_on_the_wire_are_one_line(
    run_cli: RunCli, server: ScriptedServer, variable: str, value: str, needle: str
) -> None:
    result = run_cli(["run", "hi"], server=server, env={variable: value})
    assert result.returncode == 2, result.stderr
    assert_no_traceback(result)
    [line] = result.stderr.splitlines()
    assert line.startswith("agentcli: error: ") and needle in line, line
    assert server.requests == []


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    body = {
        "id": "x",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return "data: " + json.dumps(body)  # ASCII: a lone surrogate goes as its \\ud800 escape


def test_lone_surrogates_from_the_model_are_shown(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    arguments = json.dumps({"path": "x\ud800"})
    call = {
        "index": 0,
        "id": "c1",
        "type": "function",
        "function": {"name": "read_file", "arguments": arguments},
    }
    server.enqueue(
        Reply.raw(
            [
                chunk({"role": "assistant", "tool_calls": [call]}),
                "",
                chunk({}, "tool_calls"),
                "",
                "data: [DONE]",
                "",
            ]
        ),
        Reply.raw(
            [
                chunk({"role": "assistant", "content": "a\ud800b\udcffc"}),
                "",
                chunk({}, "stop"),
                "",
                "data: [DONE]",
                "",
            ]
        ),
    )
    result = run_cli(["run", "--yes", "hi"], server=server)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "a\ufffdb\\xffc\n"
    [tool] = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    assert "no such file: x\ufffd" in tool["content"], tool
    records(only_session(cli_home))


def test_a_session_line_the_writer_could_not_encode_is_written_shown(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    """A model name from the environment, with a byte that is not UTF-8, reaches the
    session header and the request: both are written."""
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "hi"], server=server, env={"AGENTCLI_MODEL": "openai:m\udcff"})
    assert result.returncode == 0, result.stderr
    assert server.requests[0].json["model"] == "m\\xff"
    assert records(only_session(cli_home))[0]["model"] == "openai:m\\xff"
