"""One entry of the read-only table (agentcli.policy.readonly_table) and how the program it
describes reads its arguments."""

from __future__ import annotations

from collections.abc import Callable

from agentcli.policy.argv import Option, parse_options
from agentcli.records import dataclass

# The entry's own rules and the argv after the program -> why it is not read-only.
Check = Callable[["Program", list[str]], str | None]


@dataclass(frozen=True, slots=True)
class Program:
    why: str = ""  # what it does, for explanations
    deny: frozenset[str] = frozenset()  # options that write, execute or reach out
    letters: str = ""  # more short options (bundled or not, e.g. -ni) that are denied
    globs: bool = True  # unquoted globs are safe (no option could turn dangerous)
    max_operands: int | None = None  # most non-flag arguments (uniq IN OUT writes OUT)
    check: Check | None = None
    subcommands: dict[str, Program] | None = None  # git: only these, each with its rules
    low: tuple[str, ...] = ()  # examples that must classify as low
    high: tuple[str, ...] = ()  # examples that must not
    pattern_first: bool = False  # the first operand is a pattern or script, not a path
    file_options: frozenset[str] = frozenset()  # options whose value is a file it reads
    pattern_options: frozenset[str] = frozenset()  # given one, the first operand is a path
    short_values: str = ""  # short options known to take a value (besides file options)
    long_values: frozenset[str] = frozenset()  # long options known to take a value
    bundles: bool = True  # getopt-style short options; false for find's `-name` words
    allowed: frozenset[str] = frozenset()  # for checks that allow only known options
    options_end_at_double_dash: bool = True  # false for find: its predicates follow paths
    paths: bool = True  # false when no argument names a file (echo prints its arguments)


def parse_args(program: Program, args: list[str]) -> tuple[list[Option], list[int]]:
    """The options and operand indexes of `args` as the program would read them."""
    short = program.short_values + "".join(
        f[1] for f in program.file_options if len(f) == 2 and f[0] == "-" and f[1] != "-"
    )
    parsed = parse_options(
        args,
        short_values=short if program.bundles else "",
        long_values=program.long_values | {f for f in program.file_options if f[:2] == "--"},
        bundles=program.bundles,
        double_dash=program.options_end_at_double_dash,
    )
    return parsed.options, parsed.operands
