"""End-to-end: images reach the model. The installed `agentcli run` reads an image with
read_file, or gets one from an MCP server (the SDK-written fixture), and the request the
scripted server receives carries it in the provider's own wire form: an OpenAI
`image_url` data URL in a user message after the tool results (tool messages take only
text), an Anthropic `image` block inside the `tool_result`. Within `images.max_bytes` and
`images.max_per_request`; a text-only provider gets the description; the session stores
each image once beside its file, and `--resume` sends it again."""

from __future__ import annotations

import base64
import json
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCli, assert_one_error
from tests.scripted_anthropic import AReply, ScriptedAnthropic
from tests.scripted_server import Reply, ScriptedServer
from tests.test_mcp import toml_str, write_config
from tests.test_repl import StartChat, chat  # noqa: F401 (the `chat` fixture)

FIXTURES = Path(__file__).parent / "fixtures" / "mcp"
KEY = "sk-ant-scripted-key-images"


def png(colour: int = 0, padding: int = 0) -> bytes:
    """A valid 2x2 PNG; `padding` bytes of a text chunk make it as large as a test needs."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + bytes([colour, 0, 0]) * 2 for _ in range(2))
    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    text = chunk(b"tEXt", b"pad\x00" + b"x" * padding) if padding else b""
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + text
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def data_url(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{b64(data)}"


def read(path: str, call_id: str) -> dict[str, Any]:
    return {"id": call_id, "name": "read_file", "arguments": {"path": path}}


def wire(server: ScriptedServer | ScriptedAnthropic, index: int) -> list[dict[str, Any]]:
    return server.requests[index].json["messages"]


def image_urls(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    parts = content if isinstance(content, list) else []
    return [part["image_url"]["url"] for part in parts if part["type"] == "image_url"]


def texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [part["text"] for part in content if part["type"] == "text"]


def config(cli_home: Path, text: str) -> None:
    path = cli_home / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def run_reading(
    run_cli: RunCli, server: ScriptedServer, calls: dict[str, str], prompt: str = "look"
) -> tuple[Any, list[dict[str, Any]]]:
    """`agentcli run` where the model reads the files (call id -> path) in one step: the
    run, and the messages of the request that carried their results."""
    reads = [read(path, call_id) for call_id, path in calls.items()]
    server.enqueue(Reply.tool_calls(reads), Reply.text(["ok"]))
    result = run_cli(["run", prompt], server=server)
    assert result.returncode == 0, result.stderr
    return result, wire(server, 1)


def session_id(stdout: str) -> str:
    for line in stdout.splitlines():
        event = json.loads(line)
        if event["type"] == "RUN_STARTED":
            return event["threadId"]
    raise AssertionError(stdout)


# --- OpenAI-compatible -------------------------------------------------------------------


def test_read_file_of_an_image_sends_it_after_the_tool_results_as_a_data_url(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    picture = png(7)
    (workspace / "shot.dat").write_bytes(picture)  # an image by its bytes, whatever its name
    calls = {"call_img": "shot.dat", "call_txt": "notes.txt"}
    result, sent = run_reading(run_cli, server, calls, "what is in shot.dat?")

    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]
    image_result = next(m for m in sent if m.get("tool_call_id") == "call_img")
    size = f"{len(picture)} B"
    assert image_result["content"] == (
        f"shot.dat: image/png image, {len(picture)} bytes\n[image: image/png, {size}]"
    )
    follow = sent[-1]
    assert texts(follow) == ["The image returned by tool call call_img (read_file):"]
    assert image_urls(follow) == [data_url(picture)]
    # the terminal shows a line for the image, never its bytes
    assert "[image: image/png" in result.stdout + result.stderr
    assert b64(picture)[:40] not in result.stdout + result.stderr


def test_an_image_over_the_limit_is_described_with_why(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    config(cli_home, "[images]\nmax_bytes = 500\n")
    (workspace / "small.png").write_bytes(png(1))
    (workspace / "big.png").write_bytes(png(2, padding=2000))
    _, sent = run_reading(run_cli, server, {"call_big": "big.png", "call_small": "small.png"})

    big = next(m for m in sent if m.get("tool_call_id") == "call_big")
    assert "not sent to the model: over images.max_bytes (500 B)" in big["content"]
    follow = sent[-1]
    assert texts(follow) == ["The image returned by tool call call_small (read_file):"]
    assert image_urls(follow) == [data_url(png(1))]


def test_a_text_only_provider_gets_the_description(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    config(cli_home, "[providers.openai]\nimages = false\n")
    (workspace / "shot.png").write_bytes(png(3))
    _, sent = run_reading(run_cli, server, {"call_img": "shot.png"})

    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert all(isinstance(m["content"], str) for m in sent)
    assert sent[-1]["content"].endswith(f"[image: image/png, {len(png(3))} B]")


def test_a_server_that_refuses_the_images_gets_a_line_saying_how_to_go_without(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    (workspace / "shot.png").write_bytes(png(4))
    server.enqueue(
        Reply.tool_calls([read("shot.png", "call_img")]),
        Reply.error(400, "image input is not supported by this model"),
    )
    result = run_cli(["run", "look"], server=server)

    assert result.returncode == 1
    assert_one_error(
        result,
        "image input is not supported by this model",
        "the request carried 1 image(s)",
        "`images = false` in [providers.openai]",
    )


def test_a_provider_images_setting_that_is_not_a_boolean_is_one_error(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    config(cli_home, '[providers.openai]\nimages = "no"\n')
    result = run_cli(["run", "look"], server=server)
    assert result.returncode != 0
    assert_one_error(result, "providers.openai.images must be true or false")
    assert server.requests == []


def test_only_the_latest_images_go_in_one_request(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    config(cli_home, "[images]\nmax_per_request = 1\n")
    (workspace / "one.png").write_bytes(png(10))
    (workspace / "two.png").write_bytes(png(20))
    server.enqueue(
        Reply.tool_calls([read("one.png", "call_1")]),
        Reply.tool_calls([read("two.png", "call_2")]),
        Reply.text(["ok"]),
    )
    result = run_cli(["run", "compare"], server=server)

    assert result.returncode == 0, result.stderr
    assert image_urls(wire(server, 1)[-1]) == [data_url(png(10))]
    last = wire(server, 2)
    urls = [url for message in last for url in image_urls(message)]
    assert urls == [data_url(png(20))]
    first = next(m for m in last if m.get("tool_call_id") == "call_1")
    assert "left out of this request" in first["content"]
    assert "images.max_per_request (1)" in first["content"]


# --- Anthropic ---------------------------------------------------------------------------


def test_anthropic_gets_the_image_inside_the_tool_result(run_cli: RunCli, workspace: Path) -> None:
    picture = png(9)
    (workspace / "shot.webp.png").write_bytes(picture)
    with ScriptedAnthropic() as anthropic:
        anthropic.enqueue(
            AReply.tool_use(
                [{"id": "toolu_img", "name": "read_file", "input": {"path": "shot.webp.png"}}]
            ),
            AReply.text(["A square."]),
        )
        env = {"ANTHROPIC_BASE_URL": anthropic.base_url, "ANTHROPIC_API_KEY": KEY}
        result = run_cli(["run", "--model", "anthropic:claude-scripted", "look"], env=env)
        assert anthropic.errors == []

    assert result.returncode == 0, result.stderr
    [block] = wire(anthropic, 1)[-1]["content"]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_img"
    text, image = block["content"]
    assert text["type"] == "text" and "[image: image/png" in text["text"]
    assert image == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": b64(picture)},
    }


# --- MCP ---------------------------------------------------------------------------------


def test_mcp_images_reach_the_model_typed_by_their_bytes(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    pytest.importorskip("mcp")
    picture = png(5)
    (workspace / "p.png").write_bytes(picture)
    command = toml_str(sys.executable)
    script = toml_str(str(FIXTURES / "image_server.py"))
    write_config(
        cli_home, f"[mcp.servers.pics]\ncommand = {command}\nargs = [{script}]\ntrusted = true\n"
    )
    server.enqueue(
        Reply.tool_calls(
            [  # the server calls the PNG a JPEG: it goes as what its bytes are
                {
                    "id": "call_pic",
                    "name": "mcp__pics__picture",
                    "arguments": {"path": str(workspace / "p.png"), "format": "jpeg"},
                },
                {"id": "call_svg", "name": "mcp__pics__drawing", "arguments": {}},
            ]
        ),
        Reply.text(["ok"]),
    )
    result = run_cli(["run", "show", "--yes"], server=server, timeout=60)

    assert result.returncode == 0, result.stderr
    sent = wire(server, 1)
    pic = next(m for m in sent if m.get("tool_call_id") == "call_pic")
    svg = next(m for m in sent if m.get("tool_call_id") == "call_svg")
    # Described everywhere by what its bytes are, never by the server's label.
    assert "the picture at" in pic["content"] and "[image: image/png" in pic["content"]
    assert "image/jpeg" not in pic["content"]
    assert "not a PNG, JPEG, GIF or WebP image" in svg["content"]
    follow = sent[-1]
    assert texts(follow) == ["The image returned by tool call call_pic (mcp__pics__picture):"]
    assert image_urls(follow) == [data_url(picture, "image/png")]
    assert "image/jpeg" not in result.stdout + result.stderr
    [session] = (cli_home / "agentcli" / "data" / "sessions").glob("*.jsonl")
    assert "image/jpeg" not in session.read_text(encoding="utf-8")
    shown = run_cli(["sessions", "show", session.stem])
    assert "[image: image/png" in shown.stdout and "image/jpeg" not in shown.stdout


# --- sessions ----------------------------------------------------------------------------


def test_a_session_stores_each_image_once_and_resume_sends_it_again(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    picture = png(11, padding=300)
    (workspace / "shot.png").write_bytes(picture)
    server.enqueue(
        Reply.tool_calls([read("shot.png", "call_a")]),
        Reply.tool_calls([read("shot.png", "call_b")]),
        Reply.text(["Same picture twice."]),
    )
    first = run_cli(["run", "look twice", "-o", "jsonl"], server=server)
    assert first.returncode == 0, first.stderr
    sid = session_id(first.stdout)

    sessions = cli_home / "agentcli" / "data" / "sessions"
    stored = sorted((sessions / f"{sid}.images").iterdir())
    assert [path.read_bytes() for path in stored] == [picture]  # once, its own bytes
    text = (sessions / f"{sid}.jsonl").read_text(encoding="utf-8")
    assert b64(picture)[:40] not in text  # the file stays readable lines
    assert text.count('"sha256"') == 2  # two results refer to the one image

    show = run_cli(["sessions", "show", sid])
    assert show.returncode == 0, show.stderr
    assert "[image: image/png" in show.stdout and b64(picture)[:40] not in show.stdout
    exported = run_cli(["sessions", "export", sid, "--format", "json"])
    assert exported.returncode == 0, exported.stderr
    refs = [r for m in json.loads(exported.stdout)["messages"] for r in m.get("images", [])]
    assert [ref["sha256"] for ref in refs] == [stored[0].stem] * 2

    server.enqueue(Reply.text(["Still a square."]))
    resumed = run_cli(["run", "--resume", sid, "and now?"], server=server)
    assert resumed.returncode == 0, resumed.stderr
    urls = [url for message in wire(server, 3) for url in image_urls(message)]
    assert urls == [data_url(picture), data_url(picture)]

    removed = run_cli(["sessions", "rm", sid])
    assert removed.returncode == 0, removed.stderr
    assert not (sessions / f"{sid}.images").exists()


def test_a_missing_stored_image_is_its_description_on_resume(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    (workspace / "shot.png").write_bytes(png(12))
    server.enqueue(Reply.tool_calls([read("shot.png", "call_a")]), Reply.text(["ok"]))
    first = run_cli(["run", "look", "-o", "jsonl"], server=server)
    sid = session_id(first.stdout)
    for path in (cli_home / "agentcli" / "data" / "sessions" / f"{sid}.images").iterdir():
        path.unlink()

    server.enqueue(Reply.text(["ok"]))
    resumed = run_cli(["run", "--resume", sid, "again"], server=server)
    assert resumed.returncode == 0, resumed.stderr
    assert "1 of its stored images cannot be sent on (1 missing" in resumed.stderr
    sent = wire(server, 2)
    assert all(isinstance(m["content"], str) for m in sent)
    assert any("[image: image/png" in m["content"] for m in sent if m["role"] == "tool")


# What is in a stored image's place (a FIFO, a 2 GB file, ...): tests/test_e2e_stored_images.py


# --- chat: @image.png --------------------------------------------------------------------


def test_an_image_mentioned_in_chat_goes_with_the_message(
    chat: StartChat,  # noqa: F811 (the fixture imported above)
    server: ScriptedServer,
    workspace: Path,
) -> None:
    picture = png(13)
    (workspace / "cat.png").write_bytes(picture)
    server.enqueue(Reply.text(["A cat, apparently."]))
    session = chat()
    screen = session.turn("what is in @cat.png")

    assert f"attached cat.png (image/png, {len(picture)} B)" in screen
    assert b64(picture)[:24] not in screen
    [user] = [m for m in wire(server, 0) if m["role"] == "user"]
    [text] = texts(user)
    assert text.startswith("what is in @cat.png")
    assert f'<file path="cat.png">\n[image: image/png, {len(picture)} B]\n</file>' in text
    assert image_urls(user) == [data_url(picture)]

    # a tool's image is one line on the screen, never its bytes
    server.enqueue(Reply.tool_calls([read("cat.png", "call_cat")]), Reply.text(["Still a cat."]))
    screen = session.turn("read it yourself")
    assert "Read 1 file" in screen and b64(picture)[:24] not in screen  # folded
    shown = session.command("/expand 1", "[image: image/png")  # the read call, opened
    assert f"[image: image/png, {len(picture)} B]" in shown
    assert b64(picture)[:24] not in shown
