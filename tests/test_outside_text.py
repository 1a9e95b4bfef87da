"""Text from outside reaches the terminal shown, never obeyed, in every command.

One hostile world for all of them: an MCP server (tests/fixtures/mcp/hostile_server.py)
whose name, version, tool, prompt and resource names, log lines and stderr carry an OSC 52
clipboard write, a line erase, a cursor-up, a carriage return, a bidi override and a newline
followed by a spoofed line; a second one that dies saying the same; a workspace whose
directory name says it; a project configuration whose keys say it; a plug-in whose name
and import error say it; a model server whose model ids say it; a session whose prompt,
answer, tool call and file name say it. Each installed command runs as a subprocess; its
stdout and stderr are fed to a terminal emulator (pyte), which must show no line that the
hostile text began, and no byte a terminal would obey may be in them at all.

`test_every_command_is_checked` walks the CLI's own command tree: a new command is either
run here or named in EXEMPT with the reason, so none is added without escaping."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyte
import pytest

from tests.conftest import AGENTCLI, build_env
from tests.fixtures.mcp.hostile_server import HOSTILE, SPOOF
from tests.scripted_server import Reply, ScriptedServer
from tests.terminal_screen import Terminal, row_text

SERVER = Path(__file__).parent / "fixtures" / "mcp" / "hostile_server.py"
# What a terminal obeys: C0 controls but newline and tab, C1 controls, the bidi controls.
OBEYED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
COLUMNS = 400

# Every command of the CLI that is run here, by its path, with the argv of each run.
CASES: dict[str, list[list[str]]] = {
    "run": [["run", "--yes", "call the echo tool"]],
    "config show": [["config", "show"], ["config", "show", "--json"]],
    "config path": [["config", "path"]],
    "config set": [["config", "set", "sandbox.read", json.dumps([HOSTILE])]],
    "sessions list": [["sessions", "list", "--all"], ["sessions", "list", "--json"]],
    "sessions show": [["sessions", "show", "{session}"]],
    "sessions export": [
        ["sessions", "export", "{session}"],
        ["sessions", "export", "{session}", "--format", "markdown"],
    ],
    "sessions rm": [["sessions", "rm", "{hostile_session}"]],
    "sessions rewind": [["sessions", "rewind", "{session}", "--to", "1"]],
    "policy explain": [
        ["policy", "explain", "run_shell", f"echo {HOSTILE}"],
        ["policy", "explain", "--json", "run_shell", f"echo {HOSTILE}"],
    ],
    "tools list": [["tools", "list"], ["tools", "list", "--json"], ["tools"]],
    "doctor": [["doctor", "--add-dir", "{hostile_dir}"], ["doctor", "--json"]],
    "mcp add": [["mcp", "add", "--project", "extra", "--", "true"]],
    "mcp remove": [["mcp", "remove", "--project", "extra"]],
    "mcp list": [["mcp", "list"], ["mcp", "list", "--json"]],
    "mcp login": [["mcp", "login", "evil"]],
    "mcp logout": [["mcp", "logout", HOSTILE]],
    "plugins": [["plugins"], ["plugins", "--json"]],
    "models": [["models"], ["models", "--json"]],
    "trust": [["trust"], ["trust", "--list"], ["trust", "--revoke"]],
}
# A transcript (and a run's answer) keeps the lines of what was said: there a
# line may begin with anything a message said, but no control is obeyed and every name,
# path and call is one line.
TRANSCRIPTS = {"run", "sessions show", "sessions export"}
EXEMPT = {
    "chat": "the REPL: test_the_repl_listings_show_outside_text_escaped drives it on a pty",
    "serve": "answers HTTP clients with JSON and SSE, never a terminal (tests/test_e2e_serve*)",
    "mcp serve": "speaks MCP's JSON-RPC on stdout to its client, never to a terminal",
    "completions": "prints agentcli's own completion script, nothing from outside",
    "sessions copy": "needs a PostgreSQL store: tests/test_sessions_store.py runs it; it "
    "names sessions and the store through one_line, never their records",
}


def command_paths() -> set[str]:
    """Every command the installed CLI has, by path ("mcp list"), groups left out."""
    import typer

    from agentcli.cli.app import app

    found: set[str] = set()

    def walk(command: Any, path: str) -> None:
        children = getattr(command, "commands", None)
        if children:
            for name, child in children.items():
                walk(child, f"{path} {name}".strip())
        elif path:
            found.add(path)

    walk(typer.main.get_command(app), "")
    return found


def test_every_command_is_checked() -> None:
    paths = command_paths()
    unchecked = paths - set(CASES) - set(EXEMPT)
    assert not unchecked, f"commands whose output this file does not check: {unchecked}"
    assert not (set(CASES) | set(EXEMPT)) - paths, "CASES names a command that is gone"


def screen_lines(text: str) -> list[str]:
    """What a terminal shows after `text`, the lines scrolled off included."""
    screen = pyte.HistoryScreen(COLUMNS, 60, history=5000)
    stream = pyte.Stream(screen)
    stream.feed(text.replace("\n", "\r\n"))  # as a tty's output processing sends it
    scrolled = [row_text(row, COLUMNS) for row in screen.history.top]
    return scrolled + [row_text(screen.buffer[y], COLUMNS) for y in range(screen.lines)]


def assert_shown_not_obeyed(text: str, where: str, *, transcript: bool = False) -> None:
    obeyed = sorted({f"U+{ord(c):04X}" for c in OBEYED.findall(text)})
    assert not obeyed, f"{where}: {obeyed} reached the terminal raw:\n{text}"
    lines = screen_lines(text)
    if transcript:  # the message bodies keep their lines; the rest is one line each
        lines = [line for line in lines if line.startswith(("- ", "**→", "# "))]
    spoofed = [line for line in lines if line.lstrip().startswith(SPOOF)]
    assert not spoofed, f"{where}: a line the outside text began:\n{text}"


# --- the hostile world --------------------------------------------------------------------


def _toml(text: str) -> str:
    return json.dumps(text)  # a JSON string is a TOML basic string


def _plugin(site: Path) -> None:
    """An installed plug-in whose entry point's name and whose import error are hostile."""
    dist = site / "hostile_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hostile-plugin\nVersion: 0.1\n", encoding="utf-8"
    )
    name = re.sub("[\r\n=]", "-", HOSTILE)  # one line of entry_points.txt
    (dist / "entry_points.txt").write_text(
        f"[agentcli.tools]\n{name} = hostile_plugin_module\n", encoding="utf-8"
    )
    broken = site / "broken_plugin-0.1.dist-info"  # a CR ends its line: it does not parse
    broken.mkdir()
    (broken / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (broken / "entry_points.txt").write_bytes(f"[agentcli.tools]\n{HOSTILE} = x\n".encode())
    (site / "hostile_plugin_module.py").write_text(
        f"raise RuntimeError({HOSTILE!r})\n", encoding="utf-8"
    )


def _session(env: dict[str, str], workspace: Path, server: ScriptedServer) -> tuple[str, str]:
    """A recorded session whose prompt, answer and tool call are hostile, and a copy of it
    under a hostile file name: (its id, the copy's id)."""
    server.enqueue(Reply.tool_calls([{"name": "read_file", "arguments": {"path": HOSTILE}}]))
    server.enqueue(Reply.text([f"answer {HOSTILE}"]))
    done = subprocess.run(
        [str(AGENTCLI), "run", "--yes", f"prompt {HOSTILE}"],
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    [recorded] = Path(env["AGENTCLI_HOME"], "data", "sessions").glob("*.jsonl")
    hostile_id = f"{recorded.stem}{HOSTILE}"
    (recorded.parent / f"{hostile_id}.jsonl").write_bytes(recorded.read_bytes())
    return recorded.stem, hostile_id


@pytest.fixture
def world(tmp_path: Path) -> Iterator[dict[str, Any]]:
    with contextlib.ExitStack() as stack:
        yield _world(tmp_path, stack)


def _world(tmp_path: Path, stack: contextlib.ExitStack) -> dict[str, Any]:
    home = tmp_path / "home"
    workspace = tmp_path / f"ws{HOSTILE}"  # a directory name is text from outside too
    hostile_dir = tmp_path / f"dir{HOSTILE}"
    site = tmp_path / "site"
    for directory in (home / "agentcli", workspace / ".agentcli", hostile_dir, site):
        directory.mkdir(parents=True)
    _plugin(site)
    server = stack.enter_context(ScriptedServer())
    server.models = [f"model{HOSTILE}"]
    env = build_env(home, server, {"OPENAI_API_KEY": "sk-test"})
    session, hostile_session = _session(env, workspace, server)  # before the servers are set
    python = _toml(sys.executable)
    (home / "agentcli" / "config.toml").write_text(
        f"[mcp.servers.evil]\ncommand = {python}\nargs = [{_toml(str(SERVER))}]\n"
        "start_timeout = 300\n",  # a loaded machine is slow to start it, never refused
        encoding="utf-8",
    )
    (workspace / ".agentcli" / "config.toml").write_text(  # untrusted: its keys are listed
        f"max_steps = 3\n[policy]\n{_toml(HOSTILE)} = 1\n", encoding="utf-8"
    )
    return {
        "env": env,
        "workspace": workspace,
        "server": server,
        "site": str(site),
        "values": {
            "session": session,
            "hostile_session": hostile_session,
            "hostile_dir": str(hostile_dir),
        },
    }


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(argv, id=f"{path} {number}")
        for path in sorted(CASES)
        for number, argv in enumerate(CASES[path])
    ],
)
def test_a_command_shows_outside_text_escaped(world: dict[str, Any], argv: list[str]) -> None:
    argv = [a.format(**world["values"]) if "{" in a else a for a in argv]
    if argv[:2] == ["mcp", "list"]:  # and one that fails, saying so on stderr
        config = Path(world["env"]["AGENTCLI_HOME"], "config.toml")
        dies = f"command = {_toml(sys.executable)}\nargs = [{_toml(str(SERVER))}, '--die']\n"
        config.write_text(config.read_text() + f"[mcp.servers.dies]\n{dies}")
    if argv[0] == "run":
        from agentcli.mcp.tools import tool_name

        echo = tool_name("evil", f"echo{HOSTILE}")
        world["server"].enqueue(Reply.tool_calls([{"name": echo, "arguments": {"text": "hi"}}]))
        world["server"].enqueue(Reply.text([f"done {HOSTILE}"]))
    env = world["env"]
    if argv[0] == "plugins":  # the plug-in is installed where this command looks
        env = {**env, "PYTHONPATH": world["site"]}
    done = subprocess.run(
        [str(AGENTCLI), *argv],
        env=env,
        cwd=world["workspace"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    said = " ".join(argv)
    transcript = any(said.startswith(path) for path in TRANSCRIPTS) and "json" not in argv
    assert_shown_not_obeyed(done.stdout, "stdout", transcript=transcript)
    assert_shown_not_obeyed(done.stderr, "stderr")
    if "--json" in argv and done.stdout.strip():
        json.loads(done.stdout)  # still JSON, the strings the same once parsed


def test_json_output_keeps_the_servers_text(world: dict[str, Any]) -> None:
    """--json escapes what a terminal obeys as JSON escapes: a reader gets the bytes back."""
    done = subprocess.run(
        [str(AGENTCLI), "mcp", "list", "--json"],
        env=world["env"],
        cwd=world["workspace"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=True,
    )
    [evil] = [row for row in json.loads(done.stdout)["servers"] if row["name"] == "evil"]
    assert evil["server"] == f"{HOSTILE} {HOSTILE}"
    assert evil["prompts"] == [f"greet{HOSTILE}"]
    assert "\u202e" not in done.stdout and "\\u202e" in done.stdout


def test_the_repl_listings_show_outside_text_escaped(world: dict[str, Any]) -> None:
    """/help (the server's prompts), /tools, /status and /sessions on a pty, judged by pyte."""
    env = {**world["env"], "TERM": "xterm"}
    terminal = Terminal(["chat"], env=env, cwd=world["workspace"], columns=COLUMNS)
    try:
        terminal.wait_prompt()
        terminal.send("/mcp__evil__nothing\r")  # waits for the server to start, then says so
        terminal.wait_for("no MCP prompt", timeout=120)
        terminal.wait_prompt()
        for command in ("/help", "/tools", "/status", "/sessions"):
            terminal.send(command + "\r")
            terminal.wait_prompt()
        terminal.send("/exit\r")
        terminal.finish()
    finally:
        terminal.close()
    shown = terminal.lines()
    for obeyed in ("\x1b]52", "\u202e", "\x1b[1A\r"):  # the REPL draws with escapes of its own
        at = terminal.raw.find(obeyed.encode())
        assert at < 0, repr(bytes(terminal.raw[max(0, at - 400) : at + 100]))
    assert any("greet" in line for line in shown), "\n".join(shown)  # the prompt is listed
    assert not [line for line in shown if line.lstrip().startswith(SPOOF)], "\n".join(shown)
    assert not [line for line in shown if "evil" in line and "\u202e" in line]


def test_a_file_name_with_a_newline_is_one_entry(tmp_path: Path) -> None:
    """list_directory and search name a file on one line: a crafted name cannot pass for
    another entry (issue 40); its other characters stay as they are, so the model can name
    the file back (a terminal shows the listing through `visible`, which escapes them)."""
    from agentcli.output.visible import visible
    from agentcli.tools.list_directory import list_entries

    crafted = f"a\nfile             1  2026-01-01 00:00  {SPOOF}"  # a line like an entry's
    (tmp_path / crafted).write_text("x")
    (tmp_path / "b\x1b[2Kc").write_text("x")
    listed = list_entries(tmp_path, tmp_path, ".", False).content
    entries = listed.splitlines()[2:]
    assert len(entries) == 2, listed
    assert entries[0].endswith(crafted.replace("\n", "\\n")), listed
    assert entries[1].endswith("b\x1b[2Kc"), listed
    assert not OBEYED.search(visible(listed))
