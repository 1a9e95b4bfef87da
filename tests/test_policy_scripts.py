"""sed and awk programs: read-only only when they only print. Checked against GNU sed's own
`--sandbox`, which refuses exactly the commands that write, read files or run commands."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli.policy.scripts import awk_program_problem, sed_script_problem

SED = shutil.which("sed")

SED_PIECES = [
    "p",
    "d",
    "1",
    "$",
    ",",
    "/a/",
    "/a\\/w x/",
    "\\%w%",
    "!",
    "{",
    "}",
    ";",
    "\n",
    " ",
    "s/a/b/",
    "s/a/b/g",
    "s/a/b/w out",
    "s/a/b/e",
    "s|w|e|",
    "s/a/\\\n/",
    "y/ab/ba/",
    "w out",
    "W out",
    "r x",
    "R x",
    "e",
    "e id",
    "a text",
    "i\\\nline",
    "c x;w y",
    ":a",
    "ba",
    "t",
    "T x",
    "=",
    "l 5",
    "q",
    "Q 1",
    "N",
    "#c",
    "0~2",
    "+3",
    "I",
    "M",
]


def _sandbox_refuses(script: str) -> bool:
    """Whether GNU sed --sandbox refuses the script for an e, r or w command."""
    result = subprocess.run(
        [SED or "sed", "--sandbox", "-n", "-e", script, "/dev/null"],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    return "sandbox" in result.stderr


@pytest.mark.skipif(
    SED is None
    or "GNU"
    not in subprocess.run(
        [SED or "sed", "--version"], capture_output=True, text=True, check=False
    ).stdout,
    reason="needs GNU sed",
)
@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from(SED_PIECES), min_size=1, max_size=8).map("".join))
def test_sed_scripts_rated_read_only_pass_seds_own_sandbox(script: str) -> None:
    if sed_script_problem(script) is None:
        assert not _sandbox_refuses(script), script


@pytest.mark.parametrize(
    "script",
    [
        "1p",
        "s/a/b/g",
        "/x/,/y/{s/a/b/;p}",
        ":a;N;$!ba;s/\\n/ /g",
        "$!N;P;D",
        "1~3d",
        "/a/I,+2p",
        "a hello; w not a command",
        "y/abc/xyz/",
        "s/a\\/w x/b/",
        "l;=",
        "0,/re/s//X/",
    ],
)
def test_sed_scripts_that_only_print(script: str) -> None:
    assert sed_script_problem(script) is None


@pytest.mark.parametrize(
    "script",
    [
        "w out",
        "1w out",
        "s/a/b/w out",
        "s/a/b/gpw out",
        "s/x/id/e",
        "e id",
        "$e",
        "r /etc/passwd",
        "R x",
        "W out",
        "/x/{\nw out\n}",
        "1!e",
        "s|a|b|w out",
        "s/a/b/;w x",
        "p;r x",
        "{p",
        "p}",
        "k",
        "s/a/b",
        "s/a/b/ w x",
    ],
)
def test_sed_scripts_that_write_read_or_run(script: str) -> None:
    assert sed_script_problem(script) is not None


@pytest.mark.parametrize(
    "program",
    [
        "{ print $1 }",
        "NR % 2 == 0",
        "$3 > 100 { n++ } END { print n }",
        "{ a[$1] += $2 } END { for (k in a) print k, a[k] }",
        "/a|b/",
        "!/x/",
        '{ print (NF > 3 ? $4 : "-") }',
        '{ gsub(/a/, "b"); print }',
        "{ x = $1 / 2; print x }",
        '{ printf "%s\\n", $1 }',
        'BEGIN { FS = ":" } { print $1 }',
        '{ print ENVIRON["HOME"] }',
        "function f(x) { return x * 2 } { print f($1) }",
        "{ print substr($0, 1, 10) }",
        '{ if (length($0) > 80) print FILENAME ": " FNR }',
        "{ print $1 == $2 }",
    ],
)
def test_awk_programs_that_only_print(program: str) -> None:
    assert awk_program_problem(program) is None


@pytest.mark.parametrize(
    "program",
    [
        '{ system("id") }',
        'BEGIN{system("id")}',
        '{ print | "sh" }',
        '{ print |& "sh" }',
        'BEGIN { "date" | getline d }',
        '{ print > "out" }',
        '{ print >> "out" }',
        '{ printf "%s", $0 > "out" }',
        "{ print $1 > $2 }",
        'BEGIN { getline line < "/etc/passwd"; print line }',
        "BEGIN { while ((getline l < f) > 0) print l }",
        'BEGIN { ARGV[1] = "/etc/passwd" }',
        "BEGIN { ARGC = 3 }",
        '@include "lib"',
        '@load "filefuncs"',
        'BEGIN { fn = "system"; @fn("id") }',
        '{ x = 1 / 2; system("id"); y = 3 / 4 }',
        '{ print "unterminated }',
        "{ print /unterminated }",
        '{ print $1 } # ok\n{ system("x") }',
        '{ print \\\n > "out" }',
        '{ if (x) print > "out" }',
    ],
)
def test_awk_programs_that_run_write_or_read(program: str) -> None:
    assert awk_program_problem(program) is not None
