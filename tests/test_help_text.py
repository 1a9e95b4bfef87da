"""Every command's help, walked: an Examples block whose lines use that command, values
named by what they are (RULE, SECONDS, N) rather than Python types, "repeatable" on every
option that may be given more than once, and nothing cut at 40 or 80 columns. A value
that does not convert reads in plain words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer

from agentcli.cli.app import app
from agentcli.cli.help import EXAMPLES, SUMMARIES
from tests.conftest import RunCli, assert_one_error

PYTHON_TYPE = re.compile(r"<(?:str|int|float|bool|list\[|path|text)", re.IGNORECASE)


def walk(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    if hasattr(command, "commands"):  # a group (Typer's own click)
        for name, sub in command.commands.items():
            yield from walk(sub, (*path, name))


ROOT = typer.main.get_command(app)
PATHS = list(walk(ROOT))


def help_of(path: tuple[str, ...], width: int) -> str:
    command: Any = ROOT
    ctx = ROOT.make_context("agentcli", [], resilient_parsing=True, terminal_width=width)
    for name in path:
        command = command.commands[name]
        ctx = command.make_context(name, [], parent=ctx, resilient_parsing=True)
    return command.get_help(ctx)


def test_the_walk_finds_the_sub_subcommands() -> None:
    names = {" ".join(path) for path in PATHS}
    assert {"sessions list", "mcp add", "policy explain", "config show", "run"} <= names
    assert set(EXAMPLES) == names  # every command has examples, and no stale ones are left


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "agentcli")
@pytest.mark.parametrize("width", [40, 80])
def test_every_help_has_examples_and_no_python_types(path: tuple[str, ...], width: int) -> None:
    text = help_of(path, width)

    assert "\nExamples:\n" in text.replace("  Examples:", "Examples:"), text
    example_lines = text.split("Examples:\n", 1)[1].splitlines()
    assert len([line for line in example_lines if line.strip()]) >= 1
    for line in example_lines:
        if line.strip():
            assert f"agentcli {' '.join(path)}".strip() in line or not path, line
    assert not PYTHON_TYPE.search(text), text
    assert not re.search(r"\w\.\.\.$", text, re.MULTILINE), text  # a cut description


@pytest.mark.parametrize("path", [p for p in PATHS if p], ids=" ".join)
def test_options_name_their_values_and_say_repeatable(path: tuple[str, ...]) -> None:
    command: Any = ROOT
    for name in path:
        command = command.commands[name]
    for param in command.params:
        if param.param_type_name != "option" or param.is_flag:
            continue
        assert param.metavar and param.metavar.isupper(), (path, param.opts)
        if param.multiple:
            assert "(repeatable)" in (param.help or ""), (path, param.opts)


def test_summaries_fit_every_command_list() -> None:
    for path in PATHS:
        if not path:
            continue
        summary = SUMMARIES[" ".join(path)]
        parent = help_of(path[:-1], 80)
        assert summary in parent, (path, parent)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--timeout", "abc", "x"], "--timeout: 'abc' is not a number of seconds"),
        (["run", "--max-steps", "2.5", "x"], "--max-steps: '2.5' is not a whole number"),
        (["chat", "--max-steps", "many"], "--max-steps: 'many' is not a whole number"),
        (["serve", "--port", "http"], "--port: 'http' is not a port number"),
    ],
)
def test_bad_values_read_in_plain_words(run_cli: RunCli, args: list[str], needle: str) -> None:
    result = run_cli(args)

    assert result.returncode == 2
    line = assert_one_error(result, needle)
    assert "Input should be" not in line and "valid" not in line


def test_narrow_terminal_help_keeps_every_word(run_cli: RunCli) -> None:
    wide = run_cli(["run", "--help"], env={"COLUMNS": "200"})
    narrow = run_cli(["run", "--help"], env={"COLUMNS": "40"})

    described = narrow.stdout.split("Examples:")[0]  # examples are lines to copy, kept whole
    assert max(len(line) for line in described.splitlines()) <= 40
    assert "".join(narrow.stdout.split()) == "".join(wide.stdout.split())  # wrapped, not cut
