"""Streamed Markdown judged on a terminal: the installed `agentcli` on a pseudo-terminal,
its output read by a terminal emulator (pyte), the screen and the lines above it compared
with the same answer sent in one piece. Cut anywhere — inside a word, a Markdown marker, an
escape sequence the model sent, and, on the wire, inside a multi-byte character — the
answer must look the same, in colour and without, at 40, 80 and 120 columns, and after a
resize."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import build_env
from tests.scripted_server import Reply, ScriptedServer, cut_at
from tests.sse_server import Gate
from tests.terminal_screen import Terminal

DOCS_DIR = Path(__file__).parent / "data" / "markdown"
DOCS = {path.stem: path.read_text(encoding="utf-8") for path in sorted(DOCS_DIR.glob("*.md"))}
# Model text that tries to drive the terminal: shown, never obeyed, whatever the cut.
DOCS["hostile"] = (
    "Here is what the file printed:\n\n```\n\x1b[1;31mred?\x1b[0m\n\x1b]0;a title\x07\n"
    "\x1b]52;c;aGVsbG8=\x07\nline\rover it\n```\n\n"
    "A paragraph with \x1b[2J\x1b[H in it, a bell \x07 and a backspace \x08 too.\n\n"
    "- an item with \x1b[1A in it\n- a \u202ereversed\u202c item\n\n"
    "JSON carries these raw, and they end no line: \u2028, \u2029 and \x85.\n\nDone."
)
ISSUE_ANSWER = [  # the answer the issue saw lose its paragraph and its code block
    "# Title\n\n",
    "Some para",
    "graph text that is long enough.\n\n",
    "```python\n",
    "def sub(a, b):\n",
    "    return a - b\n",
    "```\n\n",
    "- one\n",
    "- two\n\n",
    "> quoted\n",
    "> more\n\n",
    "End.",
]
FOOTER = re.compile(r"↑ [\d,]+ in · ↓ [\d,]+ out · \d+\.\ds")
EVERY_PIECE = {"AGENTCLI_REDRAW_SECONDS": "0"}  # the live region redrawn at every piece


def terminal_env(home: Path, server: ScriptedServer, extra: dict[str, str]) -> dict[str, str]:
    return build_env(home, server, {"TERM": "xterm-256color", **extra})


# --- `agentcli run` -----------------------------------------------------------------


def run_screen(
    server: ScriptedServer, reply: Reply, home: Path, cwd: Path, columns: int, env: dict
) -> Terminal:
    server.enqueue(reply)
    terminal = Terminal(
        ["run", "go"], env=terminal_env(home, server, env), cwd=cwd, columns=columns
    )
    try:
        assert terminal.finish() == 0, terminal.text()
    finally:
        terminal.close()
    return terminal


@pytest.mark.parametrize("columns", [100, 40])
@pytest.mark.parametrize("colour", [True, False], ids=["colour", "NO_COLOR"])
def test_the_issues_answer_keeps_every_line(
    server: ScriptedServer, cli_home: Path, workspace: Path, columns: int, colour: bool
) -> None:
    env = {} if colour else {"NO_COLOR": "1"}
    streamed = run_screen(
        server, Reply.text(ISSUE_ANSWER, delay=0.03), cli_home, workspace, columns, env
    )
    whole = run_screen(
        server, Reply.text(["".join(ISSUE_ANSWER)]), cli_home, workspace, columns, env
    )

    shown = streamed.lines()
    assert "Some paragraph text that is long enough." in shown, shown
    assert any("return a - b" in line for line in shown), shown
    assert sum("Title" in line for line in shown) == 1, shown  # once, NO_COLOR too
    assert streamed.cells() == whole.cells(), "\n".join(shown)


@pytest.mark.parametrize("columns", [40, 120])
def test_run_at_every_piece_matches_one_piece(
    server: ScriptedServer, cli_home: Path, workspace: Path, columns: int
) -> None:
    """Every document, one piece per character group, the region redrawn at each."""
    text = DOCS["fix_a_bug"]
    pieces = [text[i : i + 7] for i in range(0, len(text), 7)]
    streamed = run_screen(server, Reply.text(pieces), cli_home, workspace, columns, EVERY_PIECE)
    whole = run_screen(server, Reply.text([text]), cli_home, workspace, columns, {})
    assert streamed.cells() == whole.cells(), streamed.text()


def test_a_resize_between_pieces_loses_nothing(
    server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    """Narrowed while a paragraph is open, on a terminal that cuts lines (xterm, pyte):
    the region is erased by the rows it has now, and the rest prints at the new width."""
    words = [f"w{number:02d} " for number in range(60)]
    steps = Reply.text(
        ["Alpha " * 10 + "\n\n", *words[:30]], finish_reason=None, usage=None, done=False
    ).steps
    rest = Reply.text([*words[30:], "\n\nEND\n"]).steps  # (its role chunk: said again)
    gate = Gate()  # the rest comes after the resize, however slow the machine
    server.enqueue(Reply(kind="stream", steps=(*steps, gate, *rest)))
    env = terminal_env(cli_home, server, {**EVERY_PIECE, "XTERM_VERSION": "pyte"})
    terminal = Terminal(["run", "go"], env=env, cwd=workspace, columns=120)
    try:
        terminal.wait_for("w29")
        terminal.resize(40)
        gate.set()
        assert terminal.finish() == 0
    finally:
        gate.set()
        terminal.close()
    lines = terminal.lines()
    assert sum(line.count("w00") for line in lines) == 1, lines
    assert " ".join(line for line in lines if line.startswith("w")).split() == [
        word.strip() for word in words
    ], lines
    assert all(len(line) <= 40 for line in lines[lines.index("END") - 3 :]), lines


OPEN_BLOCKS = {  # each long enough that its first rows are cut at 60 columns
    "quote": ["> q1 the quoted first line, long enough to be cut at sixty columns\n", "> q2\n"],
    "list": ["- l1 the first item of the list, long enough to be cut at sixty columns\n", "- l2\n"],
    "table": [
        "| c1 | c2 |\n|---|---|\n",
        "| t1 alpha beta gamma delta epsilon | t1b zeta eta theta iota kappa lambda |\n",
    ],
}


@pytest.mark.parametrize("colour", [True, False], ids=["colour", "NO_COLOR"])
@pytest.mark.parametrize("kind", sorted(OPEN_BLOCKS))
def test_a_resize_inside_an_open_block_on_a_cutting_terminal_leaves_it_once(
    server: ScriptedServer, cli_home: Path, workspace: Path, kind: str, colour: bool
) -> None:
    """80 → 60 columns while a quote, a list or a table is open, on a terminal that cuts
    lines (pyte, xterm): each row stays one row, so the region is erased whole and the
    block printed once, at the new width."""
    pieces, gate = OPEN_BLOCKS[kind], Gate()
    head = Reply.text(["Intro.\n\n", *pieces], finish_reason=None, usage=None, done=False)
    rest = Reply.text(["\nEND\n"])  # (its role chunk: said again)
    server.enqueue(Reply(kind="stream", steps=(*head.steps, gate, *rest.steps)))
    env = {**EVERY_PIECE, "XTERM_VERSION": "pyte", **({} if colour else {"NO_COLOR": "1"})}
    terminal = Terminal(
        ["run", "go"], env=terminal_env(cli_home, server, env), cwd=workspace, columns=80
    )
    try:
        terminal.wait_for(re.findall(r"\b[qlt]\d\b", pieces[-1])[0])
        terminal.resize(60)
        gate.set()
        assert terminal.finish() == 0, terminal.text()
    finally:
        gate.set()
        terminal.close()
    lines = terminal.lines()
    for marker in ("Intro.", *re.findall(r"\b[qlt]\d\b", "".join(pieces)), "END"):
        assert sum(len(re.findall(rf"(?<!\w){marker}(?!\w)", line)) for line in lines) == 1, lines
    assert lines[lines.index("Intro.") + 1] == "", lines  # the region's row: all of it erased
    block = lines[lines.index("Intro.") + 2 : lines.index("END")]
    assert block and all(len(line) <= 60 for line in block), lines


# --- `agentcli chat`: many answers in one terminal ----------------------------------


class ChatScreen:
    """One `agentcli chat` on a pyte terminal, answering turn after turn: each turn's
    answer is the rows between its prompt line and its footer."""

    def __init__(
        self, server: ScriptedServer, home: Path, cwd: Path, columns: int, env: dict[str, str]
    ) -> None:
        self.server = server
        chat_env = {**terminal_env(home, server, env), "PROMPT_TOOLKIT_NO_CPR": "1"}
        self.terminal = Terminal(["chat"], env=chat_env, cwd=cwd, columns=columns)
        self.terminal.wait_prompt()
        self.turns = itertools.count(1)

    def answer(self, reply: Reply) -> list[tuple[Any, ...]]:
        number = next(self.turns)
        self.server.enqueue(reply)
        marker = f"› go {number}"
        self.terminal.send(f"go {number}\r")

        def done() -> bool:
            lines = self.terminal.lines()
            starts = [i for i, line in enumerate(lines) if line.startswith(marker)]
            if not starts:
                return False
            after = lines[starts[-1] :]
            return any(FOOTER.search(line) for line in after) and after[-1].startswith("›")

        self.terminal.wait_for(done)
        lines = self.terminal.lines()
        start = max(i for i, line in enumerate(lines) if line.startswith(marker))
        end = next(i for i in range(start, len(lines)) if FOOTER.search(lines[i]))
        return self.terminal.cells()[start + 1 : end]

    def close(self) -> None:
        self.terminal.close()


@pytest.fixture
def chat_screen(server: ScriptedServer, cli_home: Path, workspace: Path) -> Iterator[Any]:
    started: list[ChatScreen] = []

    def start(columns: int, env: dict[str, str] | None = None) -> ChatScreen:
        screen = ChatScreen(server, cli_home, workspace, columns, {**EVERY_PIECE, **(env or {})})
        started.append(screen)
        return screen

    yield start
    for screen in started:
        screen.close()


def chunkings() -> st.SearchStrategy[tuple[str, list[int], list[int]]]:
    """A document, where its text is cut into pieces (1 to 200 of them), and where the
    bytes on the wire are cut into HTTP chunks."""
    return st.sampled_from(sorted(DOCS)).flatmap(
        lambda name: st.tuples(
            st.just(name),
            st.lists(st.integers(1, len(DOCS[name]) - 1), max_size=199, unique=True),
            st.lists(st.integers(1, 4 * len(DOCS[name])), max_size=40),
        )
    )


def check_chunkings(screen: ChatScreen, examples: int) -> None:
    """Each document cut `examples` ways looks as it does sent whole, cells and all."""
    whole = {name: screen.answer(Reply.text([text])) for name, text in DOCS.items()}
    assert all(whole.values())

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(chunkings())
    def same_screen(case: tuple[str, list[int], list[int]]) -> None:
        name, text_cuts, byte_cuts = case
        pieces = cut_at(DOCS[name], text_cuts)
        assert screen.answer(Reply.text_cut(pieces, byte_cuts)) == whole[name], name

    same_screen()


@pytest.mark.parametrize("columns", [40, 80, 120])
def test_any_chunking_shows_what_one_piece_shows(chat_screen: Any, columns: int) -> None:
    check_chunkings(chat_screen(columns), examples=12)


def test_without_colour_any_chunking_shows_what_one_piece_shows(chat_screen: Any) -> None:
    check_chunkings(chat_screen(80, {"NO_COLOR": "1"}), examples=8)


# --- links ---------------------------------------------------------------------------

LINK_ANSWER = "See the [install guide](https://example.com/install) first."


@pytest.mark.parametrize(
    "env",
    [{"TMUX": "/tmp/tmux-0/default,1,0"}, {"NO_COLOR": "1"}, {"TERM": "dumb"}, {}],
    ids=["tmux", "NO_COLOR", "dumb", "unknown-terminal"],
)
def test_a_link_keeps_its_url_where_the_terminal_may_not_draw_hyperlinks(
    server: ScriptedServer, cli_home: Path, workspace: Path, env: dict[str, str]
) -> None:
    shown = "".join(
        run_screen(server, Reply.text([LINK_ANSWER]), cli_home, workspace, 100, env).lines()
    )
    assert "install guide (https://example.com/install)" in shown, shown


def test_a_terminal_known_to_draw_hyperlinks_gets_the_text_with_the_url_behind_it(
    server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    terminal = run_screen(
        server,
        Reply.text([LINK_ANSWER]),
        cli_home,
        workspace,
        100,
        {"TERM_PROGRAM": "WezTerm"},
    )
    shown = "".join(terminal.lines())
    assert "See the install guide first." in shown, shown  # the URL is in the OSC 8 sequence
    assert "https://example.com/install" not in shown, shown


# --- agentcli's own lines, broken between words ---------------------------------------

# In the call's line (`→ run_shell command="echo '…`), `connection` crosses column 80.
STRADDLING = "some words " * 4 + "and connection refused [100%] done"


def test_a_result_line_longer_than_the_terminal_breaks_between_words(
    server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    server.enqueue(
        Reply.tool_calls(
            [{"name": "run_shell", "arguments": {"command": f"echo '{STRADDLING}'; exit 3"}}]
        ),
        Reply.text(["done"]),
    )
    terminal = Terminal(
        ["run", "--yes", "go"], env=terminal_env(cli_home, server, {}), cwd=workspace, columns=80
    )
    try:
        assert terminal.finish() == 0, terminal.text()
    finally:
        terminal.close()
    lines = terminal.lines()
    assert any(line.strip().startswith("connection refused [100%]") for line in lines), lines


def test_an_error_line_longer_than_the_terminal_breaks_between_words(
    server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    server.enqueue(Reply.error(401, "the upstream said: " + "b" * 40 + " connection reset"))
    terminal = Terminal(
        ["run", "go"], env=terminal_env(cli_home, server, {}), cwd=workspace, columns=80
    )
    try:
        terminal.finish()
    finally:
        terminal.close()
    shown = terminal.lines()
    assert any("connection reset" in line for line in shown), shown  # never `con` / `nection`
