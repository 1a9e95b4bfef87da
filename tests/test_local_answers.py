"""The local model's first answer answers: after a read, a listing, a search or a command
it says what it found in a few lines (a file's title, headings and size; a folder's
counts and names; matches in N files; an exit code and the last lines), never cut
mid-word, and offers the whole on request. In the REPL the banner and `/status` say what
the tiny model can and cannot do, and the live line says what it is doing."""

from __future__ import annotations

import asyncio
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.agent.waiting import WaitingNotice, waiting_line
from agentcli.conversation import events as ev
from agentcli.conversation.messages import Message, ToolCall
from agentcli.providers.local import local_available, results
from tests.conftest import build_env
from tests.test_local_model import FakeEngine, collect, fake_provider

AGENTCLI = Path(sys.executable).parent / "agentcli"
ROOT = Path(__file__).resolve().parent.parent
needs_model = pytest.mark.skipif(not local_available(), reason="the local model is not installed")


def answered(name: str, arguments: dict, content: str, request: str = "do it", error=None) -> str:
    call = ToolCall(id="c", name=name, arguments=json.dumps(arguments))
    messages = [
        Message.user(request),
        Message(role="assistant", tool_calls=[call]),
        Message.tool_result("c", content, error=error),
    ]
    return results.report_results(messages)


def readme_result() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    numbered = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, 1))
    return f"README.md: lines 1-{len(lines)} of {len(lines)}\n{numbered}"


def no_word_cut(answer: str, source: str) -> None:
    """Every word of the answer (but a "…"-shortened last one) is a word of the source."""
    words = set(re.findall(r"[A-Za-z]{3,}", source))
    for line in answer.splitlines():
        for word in re.findall(r"[A-Za-z]{3,}(?!…)\b", line.replace("`", " ")):
            assert word in words or word in ANSWER_WORDS, (word, line)


ANSWER_WORDS = set(
    [
        "lines",
        "bytes",
        "Title",
        "Sections",
        "and",
        "more",
        "Ask",
        "for",
        "the",
        "whole",
        "see",
        "all",
        "its",
        "It",
        "begins",
        "holds",
        "folder",
        "folders",
        "file",
        "files",
        "exited",
        "with",
        "code",
        "last",
        "printed",
        "nothing",
        "match",
        "matches",
        "output",
    ]
)


def test_a_long_file_is_summed_up_in_a_few_lines_with_the_way_to_see_it_whole() -> None:
    source = (ROOT / "README.md").read_text(encoding="utf-8")
    answer = answered("read_file", {"path": "README.md"}, readme_result())
    lines = answer.splitlines()
    assert len(lines) <= 6, answer
    assert lines[0].startswith(f"`README.md` is {len(source.splitlines())} lines, "), answer
    title = next(line[2:] for line in source.splitlines() if line.startswith("# "))
    assert f"Title: {title}" in answer
    assert "Sections (" in answer
    assert 'Ask for "the whole README.md"' in answer
    assert all(len(line) <= 400 for line in lines)
    no_word_cut(answer, source)


def test_asked_for_the_whole_file_it_is_shown_whole() -> None:
    answer = answered(
        "read_file", {"path": "README.md"}, readme_result(), "show the whole README.md"
    )
    assert answer.startswith("Here is `README.md`")
    assert "Title:" not in answer


def test_a_short_file_is_shown_as_it_is() -> None:
    content = "notes.txt: lines 1-2 of 2\n     1\tbuy milk\n     2\tcall mom"
    answer = answered("read_file", {"path": "notes.txt"}, content)
    assert answer == "Here is `notes.txt` (2 lines):\n\n```\nbuy milk\ncall mom\n```"


def test_a_plain_text_file_begins_with_its_first_lines_shortened_between_words() -> None:
    body = ["word " * 40] + [f"line {n}" for n in range(40)]
    numbered = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(body, 1))
    answer = answered("read_file", {"path": "a.txt"}, f"a.txt: lines 1-41 of 41\n{numbered}")
    assert "It begins:" in answer
    assert "> word word" in answer and "…" in answer
    assert "wor…" not in answer and "wo…" not in answer  # cut at a space


def test_a_listing_says_its_counts_and_names() -> None:
    rows = ["dir              -  2026-12-01 10:00  docs/"] + [
        f"file           {n:>4}  2026-12-01 10:00  f{n}.txt" for n in range(14)
    ]
    content = "\n".join([".: 15 entries (hidden not shown)", "type  bytes  modified  name", *rows])
    answer = answered("list_directory", {}, content)
    assert answer.startswith("`.` holds 1 folder: `docs/`; 14 files: `f0.txt`")
    assert "and 4 more" in answer
    assert len(answer.splitlines()) == 1


def test_a_search_says_in_how_many_files_and_shows_the_first_matches() -> None:
    found = [f"src/m{n}.py:{n}: TODO fix {n}" for n in range(9)]
    content = "\n".join(["9 matches in 9 files", *found])
    answer = answered("search_content", {"pattern": "TODO"}, content)
    assert answer.startswith("9 matches in 9 files for `TODO`:")
    assert "src/m5.py" in answer and "src/m6.py" not in answer
    assert "Ask for all the matches" in answer


def test_a_command_says_its_exit_code_and_its_last_lines() -> None:
    output = "\n".join(f"test {n} ok" for n in range(30))
    content = f"$ pytest\nexit code 1 · 2.00s\nsandbox: workspace-write\noutput:\n{output}"
    answer = answered("run_shell", {"command": "pytest"}, content, error="exit code 1")
    assert answer.startswith("`pytest` exited with code 1; the last 8 of its 30 lines:")
    assert "test 29 ok" in answer and "test 21 ok" not in answer
    short = answered("run_shell", {"command": "pwd"}, "$ pwd\nexit code 0 · 0.01s\noutput:\n/w")
    assert short == "`pwd` exited with code 0:\n\n```\n/w\n```"


def test_a_cut_result_is_cut_between_words() -> None:
    clipped = results.clip("alpha beta gamma delta", 13)
    assert clipped.startswith("alpha beta\n[... ")


# --- the live line and the REPL ---------------------------------------------------------


def test_the_live_line_says_the_local_model_is_choosing_a_tool() -> None:
    assert waiting_line({"seconds": 7, "doing": "choosing a tool"}) == "choosing a tool… 7s"
    assert waiting_line({"seconds": 7}) == "waiting for the server… 7s"

    async def notice() -> ev.Custom:
        said: asyncio.Queue[ev.Custom] = asyncio.Queue()
        with WaitingNotice(said.put_nowait, first=0.0, doing=lambda: "choosing a tool"):
            return await said.get()

    event = asyncio.run(notice())
    assert event.value["doing"] == "choosing a tool"


def test_the_provider_says_what_it_does_while_it_decides() -> None:
    engine = FakeEngine(['{"path":"README.md"}'], scores={"read_file": 0.0})
    provider = fake_provider(engine)
    seen = []
    original = engine.tokenize

    def tokenize(text: str) -> list[int]:
        seen.append(provider.doing())
        return original(text)

    engine.tokenize = tokenize  # type: ignore[method-assign]
    asyncio.run(collect(provider, [Message.user("show me README.md")]))
    assert "choosing a tool" in seen


@needs_model
def test_the_repl_banner_and_status_say_what_the_tiny_model_can_and_cannot_do(
    tmp_path: Path,
) -> None:
    pexpect = pytest.importorskip("pexpect")
    (tmp_path / "work").mkdir()
    env = build_env(tmp_path / "home", None, {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"})
    child = pexpect.spawn(
        str(AGENTCLI),
        ["chat", "--model", "local"],
        env=env,
        cwd=str(tmp_path / "work"),
        encoding="utf-8",
        codec_errors="replace",
        timeout=300,
        dimensions=(40, 80),
    )
    log = io.StringIO()
    child.logfile_read = log
    try:
        child.expect("tiny demo model")
        child.expect("›")
        child.sendline("/status")
        child.expect("cannot")
        child.expect("›")
    finally:
        child.close(force=True)
    shown = log.getvalue()
    assert "can " in shown and "one tool a turn" in shown


@pytest.mark.local_model
@needs_model
def test_show_me_readme_prints_a_short_summary(tmp_path: Path) -> None:
    """The README's first command, with the installed CLI and the real model."""
    (tmp_path / "work").mkdir()
    source = (ROOT / "README.md").read_text(encoding="utf-8")
    (tmp_path / "work" / "README.md").write_text(source, encoding="utf-8")
    home = tmp_path / "home"
    (home / "agentcli").mkdir(parents=True)
    # bounded by tokens, not seconds: a loaded machine must not turn the call into an answer
    (home / "agentcli" / "config.toml").write_text("[providers.local]\ncall_seconds = 3600\n")
    done = subprocess.run(
        [str(AGENTCLI), "run", "--model", "local", "--yes", "show me README.md"],
        cwd=tmp_path / "work",
        env=build_env(home, None, {"NO_COLOR": "1"}),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert 2 <= len(lines) <= 10, done.stdout
    assert "`README.md` is" in done.stdout or "README.md is" in done.stdout, done.stdout
    assert "Ask for" in done.stdout
    assert "more characters cut" not in done.stdout
    no_word_cut(done.stdout.replace("README.md", ""), source)
