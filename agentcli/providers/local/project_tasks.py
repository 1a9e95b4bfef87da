"""The workspace's own command for a task a request names without spelling a command:
"run the tests" is `make test`, `npm test`, `cargo test`, `go test ./...` or pytest, by
what the project holds, never the word `tests` run as a program (which does not exist).

Read from the files the project keeps for it (a Makefile's targets, package.json's
scripts, the marker files of cargo, go and Python projects), as a developer new to the
project would look; no file is run or imported."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from agentcli.regular_files import open_regular

# Words that name a task, as requests say it ("the tests", "the test suite", "the specs")
_TASK_WORDS = {
    "test": re.compile(r"\b(?:tests?|test ?suite|specs?|unit ?tests?)\b", re.IGNORECASE),
    "build": re.compile(r"\b(?:build|compile)\b", re.IGNORECASE),
}
_MAKE_TARGET = r"^{target}\s*:(?!=)"
_MARKER_LIMIT = 1 << 20  # a Makefile or package.json larger than this is not read


def named_task(request: str) -> str | None:
    """ "test" or "build" when the request names that task, else None."""
    for task, words in _TASK_WORDS.items():
        if words.search(request):
            return task
    return None


def is_task_words(line: str) -> bool:
    """Whether a command line is only the request's words for a task ("tests", "test
    suite"): /usr/bin/test exists, but "test suite" is no command anyone meant."""
    return any(words.fullmatch(line.strip()) for words in _TASK_WORDS.values())


def _text(path: Path) -> str | None:
    """The file's text, or None when it is missing, no regular file, too large or not
    UTF-8 (a FIFO in its place cannot hang the choice)."""
    try:
        with open_regular(path) as stream:
            data = stream.read(_MARKER_LIMIT + 1)
    except OSError:
        return None
    if len(data) > _MARKER_LIMIT:
        return None
    return data.decode("utf-8", errors="replace")


def _make_target(workspace: Path, target: str) -> bool:
    for name in ("GNUmakefile", "makefile", "Makefile"):
        text = _text(workspace / name)
        if text is not None:
            return re.search(_MAKE_TARGET.format(target=target), text, re.MULTILINE) is not None
    return False


def _npm_script(workspace: Path, script: str) -> bool:
    text = _text(workspace / "package.json")
    if text is None:
        return False
    try:
        scripts = json.loads(text).get("scripts")
    except (ValueError, AttributeError):
        return False
    return isinstance(scripts, dict) and isinstance(scripts.get(script), str)


def _python_project(workspace: Path) -> bool:
    markers = ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini")
    if any((workspace / name).is_file() for name in markers):
        return True
    tests = workspace / "tests"
    return tests.is_dir() and any(tests.glob("test*.py"))


def _pytest() -> str:
    return "pytest" if shutil.which("pytest") else "python3 -m pytest"


def task_command(workspace: Path, task: str) -> str | None:
    """The project's command for `task`, the project's own declaration first (a Makefile
    target, an npm script), then its toolchain's convention; None when it has neither."""
    if _make_target(workspace, task):
        return f"make {task}"
    if _npm_script(workspace, task):
        return "npm test" if task == "test" else f"npm run {task}"
    if (workspace / "Cargo.toml").is_file():
        return f"cargo {task}"
    if (workspace / "go.mod").is_file():
        return f"go {task} ./..."
    if task == "test" and _python_project(workspace):
        return _pytest()
    return None


def project_commands(request: str, workspace: Path | None) -> list[str]:
    """The workspace's command for the task the request names ([] for none)."""
    task = named_task(request)
    if task is None or workspace is None:
        return []
    command = task_command(workspace, task)
    return [command] if command else []
