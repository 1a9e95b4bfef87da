"""What the REPL folded away, kept to be shown again: an answered approval (its call and
diff) or a step's read-only calls (their results), each numbered as its one-line summary
says. Ctrl-O shows the last again, `/expand N` any of them."""

from __future__ import annotations

from collections.abc import Callable

from agentcli.output.visible import one_line
from agentcli.records import dataclass

Lines = Callable[[int], list[str]]  # the item's lines at a terminal width


@dataclass(frozen=True, slots=True)
class Folded:
    number: int
    title: str  # its one line, as the transcript shows it (plain text)
    lines: Lines


class FoldedItems:
    """One per REPL: numbers go on across /clear and /resume (the screen keeps them)."""

    def __init__(self) -> None:
        self._items: list[Folded] = []

    def next_number(self) -> int:
        return len(self._items) + 1

    def add(self, title: str, lines: Lines) -> int:
        number = self.next_number()
        self._items.append(Folded(number, title, lines))
        return number

    def __len__(self) -> int:
        return len(self._items)

    def expand(self, argument: str, width: int) -> list[str]:
        """The lines `/expand ARGUMENT` shows: the item's (the last one's when ARGUMENT is
        empty), or one line saying why there is none."""
        if not self._items:
            return ["nothing folded yet: answered approvals and read-only calls fold here"]
        argument = argument.strip().removeprefix("#")
        if not argument:
            item = self._items[-1]
        elif argument.isdigit() and 1 <= int(argument) <= len(self._items):
            item = self._items[int(argument) - 1]
        else:
            span = "1" if len(self._items) == 1 else f"1-{len(self._items)}"
            return [f"no folded item {one_line(argument[:20])}: /expand takes a number, {span}"]
        return [f"[{item.number}] {item.title}", *item.lines(width)]
