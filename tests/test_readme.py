"""The README stays a README: short, its first two commands the ones `.ci/run` runs, every
option of `run` and `chat` in its options table, and every relative link in it and in docs/
pointing at a file (and heading) that exists."""

from __future__ import annotations

import re
import shlex
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from agentcli.cli.options import options_of

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CI_RUN = ROOT / ".ci" / "run"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MAX_LINES = 260
OPTIONS_HEADING = "Options of `run` and `chat`"

FENCE = re.compile(r"^ *```[^\n]*\n(.*?)^ *```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`+[^`]*`+")
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def without_code(text: str) -> str:
    """The prose of a page: fenced blocks, code spans and HTML comments removed."""
    return CODE_SPAN.sub("", FENCE.sub("", COMMENT.sub("", text)))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, with GitHub's -1, -2 for repeated ones."""
    seen: Counter[str] = Counter()
    found = set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"#{1,6} (.+)", line)
        if match:
            base = slug(match.group(1))
            found.add(f"{base}-{seen[base]}" if seen[base] else base)
            seen[base] += 1
    return found


def first_commands(text: str) -> list[str]:
    return [body.strip() for body in FENCE.findall(text)][:2]


def options_table(text: str) -> list[str]:
    """The first cell of each row of the table under the options heading."""
    lines = text.splitlines()
    start = lines.index(f"## {OPTIONS_HEADING}")
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        if line.startswith("|") and not line.startswith("|---"):
            rows.append(line.split("|")[1])
    return rows[1:]  # the header row names the columns


def flags_in(cells: list[str]) -> set[str]:
    return {flag for cell in cells for flag in re.findall(r"`(--?[a-z][\w-]*)", cell)}


def test_readme_is_short() -> None:
    count = len(README.read_text(encoding="utf-8").splitlines())
    assert count <= MAX_LINES, f"README.md has {count} lines; move reference material to docs/"


def test_first_two_commands_are_install_and_run_then_the_tests() -> None:
    text = README.read_text(encoding="utf-8")
    install, tests = first_commands(text)
    steps = [shlex.split(step) for step in install.split(" && ")]
    assert steps[0] == ["python3", "-m", "venv", ".venv"]
    assert any("pip" in step and "install" in step for step in steps), install
    run = steps[-1]
    assert run[:2] == ["agentcli", "run"] and "--model" in run and "local" in run, install
    assert tests == "python -m pytest -q"
    # Nothing compiles, and how long it takes is said before the command.
    assert "CMAKE" not in install and "nothing compiles" in text[: text.index(install)]
    assert re.search(r"\d+ s on a 2-core machine", text[: text.index(install)])


def test_ci_runs_the_readme_commands() -> None:
    """`.ci/run` installs exactly as the README's first command does, then runs the second."""
    install, tests = first_commands(README.read_text(encoding="utf-8"))
    pip_steps = [step for step in install.split(" && ") if "pip install" in step]
    script = [line.strip() for line in CI_RUN.read_text(encoding="utf-8").splitlines()]
    assert pip_steps, install
    for pip_step in pip_steps:
        assert pip_step in script, f".ci/run does not run the README's install: {pip_step}"
    assert script[-1] == tests, f".ci/run must end with the README's test command: {tests}"


def test_options_table_lists_every_option_of_run_and_chat() -> None:
    documented = flags_in(options_table(README.read_text(encoding="utf-8")))
    declared = {
        flag for command in ("run", "chat") for o in options_of(command) for flag in o.flags
    }
    missing = sorted(declared - documented)
    assert not missing, f"README's options table lacks: {', '.join(missing)}"
    stale = sorted(documented - declared)
    assert not stale, f"README's options table lists options that do not exist: {stale}"


def test_the_helpers_see_what_they_should() -> None:
    """The checks below fail when they should: a missing option, file or heading."""
    assert flags_in(["`--model`, `-m PROVIDER:MODEL`", "`--yes`, `-y`"]) == {
        "--model",
        "-m",
        "--yes",
        "-y",
    }
    assert slug("Options of `run` and `chat`") == "options-of-run-and-chat"
    assert slug("AG-UI server (`agentcli serve`)") == "ag-ui-server-agentcli-serve"
    assert slug("What is protected, and how") == "what-is-protected-and-how"
    assert broken_links_of("[x](nowhere.md) [y](#no-such-heading) [z](docs/)", README) == [
        "nowhere.md",
        "#no-such-heading",
    ]


def resolves(target: str, page: Path) -> bool:
    """A relative link names a file of the repository, and a heading of it when it says #."""
    path, _, anchor = target.partition("#")
    file = (page.parent / path).resolve() if path else page
    if not file.exists() or not file.is_relative_to(ROOT):
        return False
    return not anchor or file.suffix != ".md" or anchor in anchors(file)


def broken_links_of(text: str, page: Path) -> list[str]:
    targets = LINK.findall(without_code(text))
    # https:, mailto: and the like are not ours to check.
    ours = [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t)]
    return [target for target in ours if not resolves(target, page)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_code_block_is_closed(page: Path) -> None:
    """An unclosed fence turns the rest of a page into code (and hides its links)."""
    fences = [line for line in page.read_text(encoding="utf-8").splitlines() if is_fence(line)]
    assert len(fences) % 2 == 0, f"{page.relative_to(ROOT)}: a ``` block is not closed"


def is_fence(line: str) -> bool:
    return line.lstrip().startswith("```")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = broken_links_of(page.read_text(encoding="utf-8"), page)
    assert not broken, f"{page.relative_to(ROOT)}: links to nothing: {broken}"
