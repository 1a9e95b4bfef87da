"""Reading a program's arguments the way getopt_long does, erring toward checking more.

Every form a GNU program accepts counts: bundled short options (`-abo FILE`), a value
attached to a short option (`-oFILE`) or given as the next word, a long option's value after
`=` or as the next word, and unambiguous abbreviations of long options down to one letter
(`--o=` for `--output`). Where the table cannot be sure an option takes a value, the next
word stays an operand: operands are checked as paths, so a guess never hides one."""

from __future__ import annotations

from collections.abc import Iterable

from agentcli.records import dataclass


@dataclass(frozen=True, slots=True)
class Option:
    """One option as given: `name` is `-x` or a long name as typed (`--outp`), `value` its
    attached or next-word value, and `index` / `value_index` the words' positions."""

    name: str
    value: str | None
    index: int
    value_index: int | None = None

    @property
    def long(self) -> bool:
        return self.name.startswith("--")


@dataclass(frozen=True, slots=True)
class Parsed:
    options: list[Option]
    operands: list[int]  # indexes of the operands


def long_candidates(typed: str, names: Iterable[str]) -> list[str]:
    """The long options `typed` may stand for: itself, or every known one it abbreviates."""
    names = [n for n in names if n.startswith("--")]
    if typed in names:
        return [typed]
    if len(typed) < 3:
        return []
    return [n for n in names if n.startswith(typed)]


def parse_options(
    args: list[str],
    *,
    short_values: str = "",
    long_values: Iterable[str] = (),
    bundles: bool = True,
    double_dash: bool = True,
) -> Parsed:
    """Options and operands of `args` (the words after the program's name). Options are
    recognised anywhere (GNU permutes) until `--`. With `bundles=False` (find), each word
    starting with `-` is one option, never taking the next word."""
    long_values = frozenset(long_values)
    options: list[Option] = []
    operands: list[int] = []
    index, done = 0, False
    while index < len(args):
        arg = args[index]
        if done or arg == "-" or not arg.startswith("-"):
            operands.append(index)
        elif arg == "--" and double_dash:
            done = True
        elif arg.startswith("--") or not bundles:
            name, eq, attached = arg.partition("=")
            candidates = long_candidates(name, long_values)
            takes_next = (
                not eq
                and bundles
                and candidates != []
                and all(c in long_values for c in candidates)
            )
            if takes_next and index + 1 < len(args):
                options.append(Option(name, args[index + 1], index, index + 1))
                index += 1
            else:
                options.append(Option(name, attached if eq else None, index))
        else:
            for position in range(1, len(arg)):
                letter = arg[position]
                if letter not in short_values:
                    options.append(Option(f"-{letter}", None, index))
                    continue
                rest = arg[position + 1 :]
                if rest:
                    options.append(Option(f"-{letter}", rest, index, index))
                elif index + 1 < len(args):
                    options.append(Option(f"-{letter}", args[index + 1], index, index + 1))
                    index += 1
                else:
                    options.append(Option(f"-{letter}", None, index))
                break
        index += 1
    return Parsed(options, operands)


def matches(option: Option, names: Iterable[str]) -> str | None:
    """The name in `names` this option is, or may abbreviate (long options), or None."""
    names = list(names)
    if option.name in names:
        return option.name
    if option.long:
        found = long_candidates(option.name, names)
        return found[0] if found else None
    return None
