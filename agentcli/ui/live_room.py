"""How much of a streamed Markdown block still open may stay in the live region (the rows
redrawn in place) and how much must be printed for good first.

Why: a terminal that re-wraps its lines on a narrowing (tmux, most others) keeps its last
row where it is and pushes what no longer fits above the screen's top into its history,
where no program can erase it. A live region whose rows gain more rows on a re-wrap than
there are rows above it would leave a copy of its first rows there. So the region keeps
only as many newest rows as can grow by the rows above them: the rows of the block before
those, once settled (they render the same whatever comes after), are printed for good and
count as rows above. A narrowing to half the width is what this is sized for (a pane split
in two); a narrower one still may push a few rows out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentcli.records import dataclass

NARROWING = 2  # the region survives the terminal narrowing to 1/NARROWING of its width
UNSETTLED = 2  # the newest rows never printed for good: new text may still change them


def taken(cells: int, columns: int) -> int:
    """The rows a row of `cells` cells takes on a terminal `columns` wide that re-wraps."""
    return max(1, -(-cells // max(columns, 1)))


def growth(cells: int, columns: int) -> int:
    """The rows a row of `cells` cells gains when the terminal narrows NARROWING times."""
    return taken(cells, columns // NARROWING) - taken(cells, columns)


def settles(tokens: Sequence[Any]) -> bool:
    """Whether the first rows of a block rendered from these markdown-it tokens stay as
    they are when more text is added. A table's columns take the width of their longest
    cell so far; a numbered list's numbers are padded to the width of its last number plus
    one (Rich's), which changes at 9 items and at 99: such a block is never printed early.
    A list between the two can still reach 99 items: rare, and then caught at the end."""
    for index, token in enumerate(tokens):
        if token.type == "table_open":
            return False
        if token.type == "ordered_list_open":
            items = sum(
                1
                for other in _until_close(tokens, index)
                if other.type == "list_item_open" and other.level == token.level + 1
            )
            last = int(token.attrs.get("start", 1)) + items
            if not 10 <= last <= 99:
                return False
    return True


def _until_close(tokens: Sequence[Any], index: int) -> Sequence[Any]:
    level = tokens[index].level
    for end in range(index + 1, len(tokens)):
        if tokens[end].type == "ordered_list_close" and tokens[end].level == level:
            return tokens[index + 1 : end]
    return tokens[index + 1 :]


@dataclass(frozen=True)
class Room:
    """What to do with the open block's rows not yet printed: print the first `commit`
    for good, leave the next `hidden` off the screen (until the block ends), and draw the
    rest in the live region."""

    commit: int
    hidden: int


def split(cells: Sequence[int], above: int, columns: int, most: int, *, may_commit: bool) -> Room:
    """`cells`: the open block's rows not yet printed, in cells each; `above`: the rows
    known to be above them on the screen; `most`: the region's most rows. `columns` is 0
    for a terminal that cuts lines instead of re-wrapping them (no row ever grows)."""
    grow = [growth(cell, columns) if columns else 0 for cell in cells]
    rows = [taken(cell, columns) if columns else 1 for cell in cells]
    count = len(cells)
    if may_commit:
        commit, gained, room = 0, sum(grow), above
        while commit < count - UNSETTLED and (count - commit > most or gained > room):
            gained -= grow[commit]
            room += rows[commit]
            commit += 1
        # The newest UNSETTLED rows stay drawn even where they could grow past the top:
        # hiding one would make a block's second row blink out until its fourth came.
        return Room(commit, 0)
    # Rows that cannot be printed early are left off, the oldest first (the newest always
    # shows), until the rest fits.
    gained, hidden = sum(grow), 0
    while hidden < count - 1 and (count - hidden > most or gained > above):
        gained -= grow[hidden]
        hidden += 1
    return Room(0, hidden)
