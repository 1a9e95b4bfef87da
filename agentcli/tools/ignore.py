"""Gitignore-style matching and the directory walk behind the search tools.

Both search backends must list exactly the same files, so this module mirrors what ripgrep
14 does when run with `--no-require-git --hidden --no-ignore-global --no-ignore-dot
--no-ignore-exclude --no-ignore-parent -g '!.git'`:

- Globs follow ripgrep's `globset` rules: `*` and `?` never cross `/`, `**` spans
  directories only as a whole path component, `[...]` classes, `{a,b}` alternates (not
  nested), backslash escapes. pathspec is not used here: its patterns answer "is this file
  excluded, parents included", while a walk needs "does this rule match this one entry",
  and the two disagree on cases such as `tmp/**` followed by `!tmp/keep/`.
- A rule without a slash matches the name at any depth; a rule with one is anchored at the
  directory of its `.gitignore` (or at the workspace root for a search glob).
- Each entry is checked against the `.gitignore` files of its parent directories, deepest
  first; the last matching rule of the first file with a match decides. Ignored
  directories are not entered, so nothing below them can be re-included, as in git.
- Entries named `.git` and symlinks are skipped; the starting directory itself is never
  checked (it was asked for explicitly).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator

from agentcli.records import dataclass
from agentcli.regular_files import read_text

GITIGNORE = ".gitignore"


# globset's recursive tokens: `**/` at the start, `/**` at the end, `/**/` inside.
_PREFIX = "(?:/?|.*/)"
_SUFFIX = "/.*"
_ZERO_OR_MORE = "(?:/|/.*/)"


class GlobError(ValueError):
    """A glob ripgrep would reject; the message names the problem."""


def _parse_class(glob: str, i: int) -> tuple[str, int]:
    """Translates the class starting after `[` at index i; returns (regex, index after `]`).
    Inside a class every character is literal, as in globset."""
    n = len(glob)
    negated = i < n and glob[i] in "!^"
    if negated:
        i += 1
    ranges: list[list[str]] = []
    first = True
    in_range = False
    while True:
        if i >= n:
            raise GlobError("unclosed character class; missing ']'")
        c = glob[i]
        i += 1
        if c == "]" and not first:
            break
        if c == "-" and not first and not in_range:
            in_range = True
        elif in_range:
            if c < ranges[-1][0]:
                raise GlobError(f"invalid range; '{ranges[-1][0]}' > '{c}'")
            ranges[-1][1] = c
            in_range = False
        else:
            ranges.append([c, c])
        first = False
    if in_range:
        ranges.append(["-", "-"])
    body = "".join(
        re.escape(lo) if lo == hi else f"{re.escape(lo)}-{re.escape(hi)}" for lo, hi in ranges
    )
    return ("[^" if negated else "[") + body + "]", i


def glob_to_regex(glob: str) -> str:
    """Translates a glob to a regular expression for `fullmatch`, like ripgrep's globset
    with literal separators and backslash escapes."""
    if glob == "**":
        return ".*"
    branches: list[list[str]] = [[]]  # [top level] or [top level, alternates...]
    n = len(glob)
    i = 0
    prev: str | None = None  # the previous character of the glob, as globset tracks it
    while i < n:
        c = glob[i]
        i += 1
        tokens = branches[-1]
        in_alt = len(branches) > 1
        if c == "\\":
            if i >= n:
                raise GlobError("dangling '\\'")
            tokens.append(re.escape(glob[i]))
            c = glob[i]
            i += 1
        elif c == "?":
            tokens.append("[^/]")
        elif c == "*":
            if i >= n or glob[i] != "*":
                tokens.append("[^/]*")
            else:
                i += 1
                c = "*"
                nxt = glob[i] if i < n else None
                if not tokens:  # `**` opens the glob or an alternate
                    if nxt is None or nxt == "/":
                        tokens.append(_PREFIX)
                        i += nxt is not None
                        c = "/"
                    else:
                        tokens.append("[^/]*")
                elif prev != "/" and not (in_alt and prev in (",", "{")):
                    tokens.append("[^/]*")
                elif nxt is None or (in_alt and nxt in ",}") or nxt == "/":
                    if nxt == "/":
                        i += 1
                        c = "/"
                    # The `/` before `**` becomes part of the recursive token.
                    last = tokens.pop()
                    if last in (_PREFIX, _SUFFIX):
                        tokens.append(last)
                    else:
                        tokens.append(_ZERO_OR_MORE if nxt == "/" else _SUFFIX)
                else:
                    tokens.append("[^/]*")
        elif c == "[":
            regex, i = _parse_class(glob, i)
            tokens.append(regex)
        elif c == "{":
            if in_alt:
                raise GlobError("nested alternate groups are not allowed")
            branches.append([])
        elif c == "}" and in_alt:
            alternates = ["".join(b) for b in branches[1:] if b]
            del branches[1:]
            # An empty group still counts as a token (globset matches nothing for it).
            branches[0].append("(?:" + "|".join(alternates) + ")" if alternates else "")
        elif c == "," and in_alt:
            branches.append([])
        else:
            tokens.append(re.escape(c))
        prev = c
    if len(branches) > 1:
        raise GlobError("unclosed alternate group; missing '}'")
    if branches[0] == [_PREFIX]:
        return ".*"  # `**/` and `**/**` match everything, like `**`
    return "".join(branches[0])


@dataclass(frozen=True, slots=True)
class Rule:
    """One gitignore line (or one search glob) in ripgrep's normalised form."""

    glob: str  # as globset sees it, e.g. `**/build` for the line `build/`
    negated: bool  # `!rule`: re-include (or, for a search glob, exclude)
    dir_only: bool  # written with a trailing slash
    regex: re.Pattern[str]


def parse_rule(line: str) -> Rule | None:
    """Parses one gitignore line the way ripgrep's ignore crate does; None for blanks and
    comments. Raises GlobError for a glob ripgrep would reject."""
    if line.startswith("#"):
        return None
    if not line.endswith("\\ "):
        line = line.rstrip()
    if not line:
        return None
    negated = anchored = False
    if line.startswith(("\\!", "\\#")):
        line = line[1:]
    else:
        if line.startswith("!"):
            negated = True
            line = line[1:]
        if line.startswith("/"):
            line = line[1:]
            anchored = True
    dir_only = line.endswith("/")
    if dir_only:
        line = line[:-1]
        if line.endswith("\\"):
            line = line[:-1]
    glob = line
    if not anchored and "/" not in line and not (glob.startswith("**/") or glob == "**"):
        glob = "**/" + glob  # no slash: the name matches at any depth
    if glob.endswith("/**"):
        glob += "/*"  # `dir/**` matches what is inside dir, not dir itself
    return Rule(glob, negated, dir_only, re.compile(glob_to_regex(glob)))


_WILD = re.compile(r"[\\?*\[\]{},]")


def parse_gitignore(text: str) -> list[Rule]:
    rules = []
    for line in text.removeprefix("\ufeff").split("\n"):
        try:
            rule = parse_rule(line.removesuffix("\r"))
        except GlobError:
            continue  # ripgrep skips a line it cannot parse and keeps the rest
        if rule is not None:
            rules.append(rule)
    return rules


class RuleSet:
    """The rules of one `.gitignore`, matched against paths relative to its directory."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        # One alternation per kind answers the common "no rule matches" case in one call.
        self._any = _union(rules)
        self._any_file = _union([r for r in rules if not r.dir_only])

    def verdict(self, path: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a `!` rule; None: no rule matches."""
        probe = self._any if is_dir else self._any_file
        if probe is None or probe.fullmatch(path) is None:
            return None
        for rule in reversed(self.rules):
            if (is_dir or not rule.dir_only) and rule.regex.fullmatch(path):
                return not rule.negated
        return None


def _union(rules: list[Rule]) -> re.Pattern[str] | None:
    if not rules:
        return None
    return re.compile("|".join(f"(?:{r.regex.pattern})" for r in rules))


Chain = tuple[tuple[str, RuleSet], ...]  # (directory relative to the base, its rules)


def _load_rules(directory: str) -> RuleSet | None:
    try:
        # a FIFO in a repository's place of a .gitignore is not waited on
        text = read_text(os.path.join(directory, GITIGNORE), errors="replace")
    except OSError:  # missing, not a regular file, unreadable: no rules, as with ripgrep
        return None
    rules = parse_gitignore(text)
    return RuleSet(rules) if rules else None


def _ignored(chain: Chain, rel: str, is_dir: bool) -> bool:
    for base, rules in reversed(chain):
        verdict = rules.verdict(rel[len(base) + 1 :] if base else rel, is_dir)
        if verdict is not None:
            return verdict
    return False


class SearchGlob:
    """A search filter with ripgrep's `-g` semantics: gitignore syntax matched from the
    base directory; a file must match (unless the glob starts with `!`, which excludes
    matching files and prunes matching directories)."""

    def __init__(self, glob: str) -> None:
        rule = parse_rule(glob)
        if rule is None:
            raise GlobError("empty glob")
        self.text = glob
        # In ripgrep a `-g` glob is a whitelist; `!glob` is the ignore form.
        self.negated = rule.negated
        self.rule = rule

    def admits_dir(self, rel: str) -> bool:
        return not (self.negated and self.rule.regex.fullmatch(rel))

    def admits_file(self, rel: str) -> bool:
        if self.rule.dir_only:
            return self.negated  # a directory glob matches no file
        return (self.rule.regex.fullmatch(rel) is None) == self.negated

    @property
    def anchored_prefix(self) -> str:
        """The literal leading directories of an anchored glob (`src/app` for
        `src/app/**/*.py`); a walk can start there. Empty when there are none."""
        if self.negated or self.rule.glob.startswith("**"):
            return ""
        parts = self.rule.glob.split("/")[:-1]
        prefix = []
        for part in parts:
            if not part or _WILD.search(part):
                break
            prefix.append(part)
        return "/".join(prefix)


class Tree:
    """The searchable files under `start` (a directory relative to `base`; "" for base),
    filtered by .gitignore files and an optional search glob."""

    def __init__(self, base: str, start: str, glob: SearchGlob | None = None) -> None:
        self.base = base
        self.start = start
        self.glob = glob
        chain: list[tuple[str, RuleSet]] = []
        parts = start.split("/") if start else []
        for depth in range(len(parts)):  # the start's ancestors, from the base down
            rel = "/".join(parts[:depth])
            rules = _load_rules(os.path.join(base, rel))
            if rules is not None:
                chain.append((rel, rules))
        self.ancestors: Chain = tuple(chain)
        self._dirs: dict[str, Chain | None] = {}

    def path(self, rel: str) -> str:
        """Where `rel` is on disk (a subclass may pin part of the tree to an open fd)."""
        return os.path.join(self.base, rel) if rel else self.base

    def _own_chain(self, directory: str, chain: Chain) -> Chain:
        rules = _load_rules(self.path(directory))
        return (*chain, (directory, rules)) if rules is not None else chain

    def _keeps(self, chain: Chain, rel: str, name: str, is_dir: bool) -> bool:
        if name == ".git" or _ignored(chain, rel, is_dir):
            return False
        if self.glob is None:
            return True
        return self.glob.admits_dir(rel) if is_dir else self.glob.admits_file(rel)

    def walk(self, stop: Callable[[], bool] = lambda: False) -> Iterator[str]:
        """Yields base-relative file paths in sorted order (by path component)."""
        # The stack holds (rel, chain): a chain for a directory to expand, None for a file.
        stack: list[tuple[str, Chain | None]] = [(self.start, self.ancestors)]
        while stack:
            rel, chain = stack.pop()
            if chain is None:
                yield rel
                continue
            if stop():
                return
            chain = self._own_chain(rel, chain)
            try:
                with os.scandir(self.path(rel)) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                continue  # unreadable: skipped, as ripgrep does
            found: list[tuple[str, Chain | None]] = []
            for entry in entries:
                child = f"{rel}/{entry.name}" if rel else entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if self._keeps(chain, child, entry.name, True):
                            found.append((child, chain))
                    elif entry.is_file(follow_symlinks=False) and self._keeps(
                        chain, child, entry.name, False
                    ):
                        found.append((child, None))
                except OSError:
                    continue
            stack.extend(reversed(found))

    def _dir_chain(self, rel: str) -> Chain | None:
        """The rules in force inside directory `rel`, or None when the walk would not
        enter it."""
        if rel in self._dirs:
            return self._dirs[rel]
        if rel == self.start:
            chain: Chain | None = self._own_chain(rel, self.ancestors)
        elif len(rel) <= len(self.start):  # not below start: never part of the walk
            chain = None
        else:
            parent, _, name = rel.rpartition("/")
            outer = self._dir_chain(parent)
            if outer is None or not self._keeps(outer, rel, name, True):
                chain = None
            else:
                chain = self._own_chain(rel, outer)
        self._dirs[rel] = chain
        return chain

    def enters(self, rel: str) -> bool:
        """Whether the walk would enter directory `rel` (a path under start)."""
        return self._dir_chain(rel) is not None
