"""Gitignore rules said again from a subdirectory, for ripgrep.

ripgrep searches a subdirectory from inside it (its working directory is the opened
directory, so a symlink swapped in cannot move the search) and with --no-ignore-parent
(the `.gitignore` files above would otherwise be read from wherever the path leads, up
to the file system's root). The rules of the `.gitignore` files between the workspace
root and the subdirectory are handed to it as an ignore file instead, and an ignore file's
rules are matched from ripgrep's working directory: each rule has to be rewritten so that
it matches a path `p` exactly when the original matches `below/p`.

A rule is a sequence of path components, some of them `**` (any number of components).
Reading `below`'s components through it one by one leaves a set of places in the rule; the
rest of the rule from each place is one rewritten line. So `src/**/gen` from `src/app`
becomes `**/gen` (the `**` may take `app` and more), and `**/a/b` from `a` becomes
`**/a/b` and `/b`. An alternate group that spans components (`{src,lib}/x`) is written out
first; one within a component (`*.{js,ts}`) is matched as it is.

The rewriting reads globs as ripgrep's globset does, corners included: a `**` inside an
alternate group is recursive only against a `/` of its own alternate, and a negated
character class (`a[!x]b`) also matches a `/`. tests/test_search.py checks the rewriting
against the rule's own regular expression on rules drawn from a grammar of such pieces,
and against ripgrep on real trees.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from functools import lru_cache

from agentcli.tools.ignore import GlobError, Rule, glob_to_regex

_RECURSIVE = "**"
# A line that writes out to more globs than this (one with nine `[!x]` classes inside
# names, or nine groups of two alternates that span names) is not rewritten: a hostile
# `.gitignore` must not make the work explode.
MAX_WRITTEN_OUT = 256


class TooManyLines(Exception):
    """A rule would be written out to more than MAX_WRITTEN_OUT globs."""


def rebase_rule(rule: Rule, below: str) -> list[str]:
    """`rule` (matched from some directory) as gitignore lines matched from its
    subdirectory `below`, for the paths under it: a path `p` matches one of the lines
    exactly when `below/p` matches the rule. No lines when it matches nothing there.
    Raises TooManyLines for a rule that would need too many."""
    steps = below.split("/")
    lines: list[str] = []
    for alternative in _write_out_spanning_groups(rule.glob):
        components = _components(alternative)
        for rest in _rests(components, steps):
            line = ("!" if rule.negated else "") + rest + ("/" if rule.dir_only else "")
            if line not in lines:
                lines.append(line)
    return lines


def _rests(components: list[str], steps: list[str]) -> list[str]:
    """What is left of a rule after `steps` have been read through it, each anchored."""
    places = _close({0}, components)
    for step in steps:
        following: set[int] = set()
        for place in places:
            if place == len(components):
                continue  # the rule is used up: it matched an ancestor, not what is below
            component = components[place]
            if component == _RECURSIVE:
                following.add(place)  # `**` takes this step and may take more
            elif _component_regex(component).fullmatch(step):
                following.add(place + 1)
        places = _close(following, components)
    rests = []
    for place in sorted(places):
        if place == len(components):
            continue
        if place and components[place - 1] == _RECURSIVE and place - 1 in places:
            continue  # what follows a `**` is already matched by the `**` line before it
        rest = "/".join(components[place:])
        # A rest that starts with `**` matches at any depth by itself; any other is
        # anchored with a leading `/` (without it, a one-component rest would match a name
        # at any depth).
        rests.append(rest if components[place] == _RECURSIVE else "/" + rest)
    return rests


def _close(places: set[int], components: list[str]) -> set[int]:
    """Adds the places reached by a `**` taking no component."""
    pending = list(places)
    closed = set(places)
    while pending:
        place = pending.pop()
        recursive = place < len(components) and components[place] == _RECURSIVE
        if recursive and place + 1 not in closed:
            closed.add(place + 1)
            pending.append(place + 1)
    return closed


@lru_cache(maxsize=512)
def _component_regex(component: str) -> re.Pattern[str]:
    try:
        return re.compile(glob_to_regex(component))
    except GlobError:
        return re.compile(r"(?!)")  # the whole rule parsed, so this does not happen


def _scan(glob: str) -> list[tuple[str, str]]:
    """The glob as (kind, text) pieces: "sep" for a separator (`/`, or `\\/`), "group"
    for an alternate group `{...}`, "text" for anything else (an escape and a character
    class are kept whole, so a `/`, `,` or `}` inside them is not taken for syntax)."""
    pieces: list[tuple[str, str]] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "\\" and i + 1 < n:
            pieces.append(("sep", "/") if glob[i + 1] == "/" else ("text", glob[i : i + 2]))
            i += 2
        elif c == "/":
            pieces.append(("sep", "/"))
            i += 1
        elif c == "[":
            end = _class_end(glob, i)
            pieces.append(("text", glob[i:end]))
            i = end
        elif c == "{":
            end = _group_end(glob, i)
            pieces.append(("group", glob[i:end]))
            i = end
        else:
            pieces.append(("text", c))
            i += 1
    return pieces


def _class_end(glob: str, start: int) -> int:
    """The index after the `]` closing the class that opens at `start` (as globset reads
    it: a `]` right after `[`, `[!` or `[^` is a member)."""
    i = start + 1
    if i < len(glob) and glob[i] in "!^":
        i += 1
    if i < len(glob) and glob[i] == "]":
        i += 1
    end = glob.find("]", i)
    return len(glob) if end < 0 else end + 1


def _group_end(glob: str, start: int) -> int:
    i = start + 1
    while i < len(glob):
        c = glob[i]
        if c == "\\":
            i += 2
        elif c == "[":
            i = _class_end(glob, i)
        elif c == "}":
            return i + 1
        else:
            i += 1
    return len(glob)


def _alternates(group: str) -> list[str]:
    """The alternates of `{...}`, split at its own commas."""
    body = group[1:-1] if group.endswith("}") else group[1:]
    return _split(body, lambda kind, text: kind == "text" and text == ",")


def _write_out_spanning_groups(glob: str) -> list[str]:
    """The glob as globs without anything that spans components: each alternate group
    that can match a `/` written out (one glob per combination), then each character class
    that can match `/` given as itself or a separator. Groups and classes within one
    component stay as they are."""
    pieces = _scan(glob)
    choices: list[list[str]] = []  # fixed text, and the written-out groups between it
    for index, (kind, text) in enumerate(pieces):
        if kind == "group" and _spans(text[1:]):
            at_start = index == 0 or pieces[index - 1][0] == "sep"
            following = index + 1 < len(pieces)
            choices.append(
                [
                    written
                    for alternate in _alternates(text)
                    for written in _written_out(alternate, at_start, following)
                ]
            )
            choices.append([""])
        elif choices and len(choices[-1]) == 1:
            choices[-1][0] += text
        else:
            choices.append([text])
    _check_count(choices)
    globs = [_join(parts) for parts in itertools.product(*choices)]
    return [written for glob in globs for written in _classes_written_out(glob, len(globs))]


def _check_count(choices: list[list[str]], times: int = 1) -> None:
    count = times
    for choice in choices:
        count *= len(choice)
        if count > MAX_WRITTEN_OUT:
            raise TooManyLines


def _join(parts: tuple[str, ...]) -> str:
    """Written-out groups put between the fixed text. Stars meeting at a join are one
    `*`: each was a star within a component (next to a group, `**` is not recursion), and
    written as `**` they could read as recursion."""
    joined = ""
    for part in parts:
        if part.startswith("*") and _ends_with_star(joined):
            joined = _without_trailing_stars(joined)
            part = "*" + part.lstrip("*")
        joined += part
    return joined


def _ends_with_star(glob: str) -> bool:
    pieces = _scan(glob)
    return bool(pieces) and pieces[-1] == ("text", "*")


def _without_trailing_stars(glob: str) -> str:
    while _ends_with_star(glob):
        glob = glob[:-1]
    return glob


def _spans(text: str) -> bool:
    return any(kind == "sep" or _slash_class(kind, piece) for kind, piece in _scan(text))


def _slash_class(kind: str, text: str) -> bool:
    return kind == "text" and text.startswith("[") and bool(_component_regex(text).fullmatch("/"))


def _classes_written_out(glob: str, siblings: int) -> list[str]:
    # A class that matches `/` (`[!x]`, `[/]`) inside a name can also be a separator; as
    # itself it stays in the rewritten lines, where ripgrep gives it the same meaning. (At
    # either end of a name, as a separator it would leave an empty name: nothing.)
    pieces = _stars_collapsed(_scan(glob))
    choices = [
        [text, "/"] if _slash_class(kind, text) and _inside_name(pieces, index) else [text]
        for index, (kind, text) in enumerate(pieces)
    ]
    _check_count(choices, siblings)
    return ["".join(parts) for parts in itertools.product(*choices)]


def _inside_name(pieces: list[tuple[str, str]], index: int) -> bool:
    return 0 < index < len(pieces) - 1 and "sep" not in (pieces[index - 1][0], pieces[index + 1][0])


def _stars_collapsed(pieces: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Runs of stars within a component as the one `*` they mean, so that a class becoming
    a separator cannot turn `a**[!x]b` into the recursion `a**/b`. A component that is
    `**` stays."""
    star = ("text", "*")
    kept = []
    for index, piece in enumerate(pieces):
        in_run = piece == star and index and pieces[index - 1] == star
        if in_run and not _whole_component(pieces, index - 1):
            continue
        kept.append(piece)
    return kept


def _whole_component(pieces: list[tuple[str, str]], index: int) -> bool:
    """Whether the two pieces from `index` are a whole component."""
    before = index == 0 or pieces[index - 1][0] == "sep"
    after = index + 2 == len(pieces) or pieces[index + 2][0] == "sep"
    return before and after


def _written_out(alternate: str, at_start: bool, following: bool) -> list[str]:
    """One alternate of a group as globset reads it in place, said so that it means the
    same outside the group. In a group, `**` is recursive only against a `/` of its own
    alternate: alone it is `*`; `**/` opening it may also take nothing or end a partial
    component (`x{**/a,b}` matches `xa`, `x/a` and `xyz/a`); `/**` closing it takes at
    least one more component."""
    if alternate == _RECURSIVE:
        return ["*"]
    written = [alternate]
    if alternate.startswith("**/") and not at_start:
        rest = alternate[3:]
        written = [rest, "/" + rest, "*/**/" + rest]
    if alternate.endswith("/**") and following:
        # `{a/**,b}c` is a/**/*c; `{a/**,b}/c` is a/**/*/c (one component or more)
        written = [w + "/*" for w in written]
    return written


def _components(glob: str) -> list[str]:
    return _split(glob, lambda kind, _text: kind == "sep")


def _split(glob: str, cut: Callable[[str, str], bool]) -> list[str]:
    """The glob's text between the pieces that `cut` picks (given kind and text)."""
    parts: list[str] = []
    current: list[str] = []
    for kind, text in _scan(glob):
        if cut(kind, text):
            parts.append("".join(current))
            current = []
        else:
            current.append(text)
    parts.append("".join(current))
    return parts
