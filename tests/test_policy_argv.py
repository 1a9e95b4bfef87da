"""The option reader against getopt_long itself (util-linux `getopt`): for any argv over a
small option table, the options, their values and the operands must be what GNU getopt
finds — bundles, attached values, `=` values and abbreviations included."""

from __future__ import annotations

import shlex
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli.policy.argv import long_candidates, parse_options

GETOPT = shutil.which("getopt")
SHORT = "ab:c"  # -b takes a value
LONG = ["output:", "verbose", "version", "file:"]  # --output and --file take one


def getopt(args: list[str]) -> tuple[list[tuple[str, str | None]], list[str]] | None:
    """What GNU getopt finds in `args`, or None when it refuses them (ambiguous, unknown,
    a missing value)."""
    result = subprocess.run(
        [GETOPT or "getopt", "-o", SHORT, "-l", ",".join(LONG), "--", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=10,
    )
    if result.returncode != 0:
        return None
    words = shlex.split(result.stdout)
    options: list[tuple[str, str | None]] = []
    index = 0
    while words[index] != "--":
        name = words[index]
        takes = name == "-b" or name in ("--output", "--file")
        options.append((name, words[index + 1] if takes else None))
        index += 2 if takes else 1
    return options, words[index + 1 :]


def ours(args: list[str]) -> tuple[list[tuple[str, str | None]], list[str]]:
    """Our reading, with abbreviations written out as getopt prints them."""
    parsed = parse_options(args, short_values="b", long_values={"--output", "--file"})
    names = ["--output", "--verbose", "--version", "--file"]
    options = []
    for option in parsed.options:
        found = long_candidates(option.name, names) if option.long else [option.name]
        options.append((found[0] if len(found) == 1 else option.name, option.value))
    return options, [args[i] for i in parsed.operands]


WORDS = [
    "-a",
    "-ac",
    "-b",
    "-bX",
    "-abY",
    "-cab",
    "--output",
    "--output=o",
    "--out=p",
    "--o",
    "--verbose",
    "--verb",
    "--file",
    "--fi=q",
    "--",
    "x",
    "y",
    "-",
    "-ca",
]


@pytest.mark.skipif(GETOPT is None, reason="needs util-linux getopt")
@settings(max_examples=120, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from(WORDS), max_size=6))
def test_options_are_read_as_getopt_long_reads_them(args: list[str]) -> None:
    expected = getopt(args)
    if expected is None:
        return  # getopt refuses it: the program would not run
    assert ours(args) == expected, args
