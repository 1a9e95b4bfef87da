"""search_files (find files by glob) and search_content (grep by regular expression).

Two backends give identical results: ripgrep (agentcli.tools.search_rg) when it is
installed — the `ripgrep` wheel is a dependency where one exists — and a pure-Python walk
(agentcli.tools.search_py) where it is not (or cannot serve: see search_rg). A regular
expression only Python's `re` accepts (look-around, backreferences) is run by Python over
the files ripgrep lists.
The tools' `backend` argument or AGENTCLI_SEARCH_BACKEND=python|ripgrep forces one. The
backends are imported by the first search, not with the tools.

The shared rules: `.gitignore` files are honoured at every level, with or without git;
entries named `.git` and symlinks are skipped; hidden files are searched; a file with a NUL
byte anywhere is binary and skipped; lines are split on `\\n` only and decoded lossily.
"""

from __future__ import annotations

import functools
import os
import re
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentcli.output.visible import name_on_one_line
from agentcli.risk import Assessment
from agentcli.tools.base import ToolContext, ToolFailure, ToolOutput
from agentcli.tools.file_access import PathTool, assess_path

if TYPE_CHECKING:
    from agentcli.tools.ignore import SearchGlob
    from agentcli.tools.search_plan import FileHits, Plan, Target

MAX_FILES = 1000  # paths search_files returns
DEFAULT_MAX_RESULTS = 100  # matching lines search_content returns
MAX_RESULTS = 1000
MAX_CONTEXT = 10


def _printable(text: str) -> str:
    # File names that are not UTF-8 arrive with surrogate escapes: shown `\xHH`, which the
    # file tools read back as the same bytes (agentcli.text.decoding).
    from agentcli.text.decoding import shown

    return shown(text)


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.3g} MB"


def _plural(n: int, word: str) -> str:
    if word == "match":
        return f"{n} match" if n == 1 else f"{n} matches"
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


_CLIMBS = re.compile(r"(?:^!?|[/{,])\.\.(?:$|[/},])")


def _check_glob_stays_inside(glob: str) -> None:
    """A glob matches below the searched path: one with a `..` component would walk out
    of it (and of the workspace)."""
    if _CLIMBS.search(glob):
        raise ToolFailure(
            f"invalid glob {glob!r}: `..` is not allowed in a glob, which matches below the "
            "searched path; to search another directory, give it as `path`"
        )


def _compile_glob(glob: str) -> SearchGlob:
    from agentcli.tools.ignore import GlobError, SearchGlob

    _check_glob_stays_inside(glob)
    try:
        return SearchGlob(glob)
    except GlobError as exc:
        raise ToolFailure(f"invalid glob {glob!r}: {exc}") from None


class SearchFiles(PathTool):
    path_default = "."
    risk_summary = "low; high outside the workspace"
    name = "search_files"
    read_only = True
    description = (
        "Find files by name with a glob, e.g. `**/*.py`, `*.{md,txt}`, `src/**/test_*.ts`. "
        "A glob without a slash matches names at any depth (`*.py` finds every Python "
        "file); a glob with a slash is matched against the whole path from the workspace "
        "root (`src/*.py` is only files directly in src, also when `path` is given). "
        "Honours .gitignore files (nested ones too), skips .git, includes hidden files, "
        f"does not follow symlinks. Returns workspace-relative paths, sorted, at most "
        f"{MAX_FILES}."
    )
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "minLength": 1,
                "description": "Glob to match file paths against, e.g. `**/*.py`.",
            },
            "path": {
                "type": "string",
                "description": "Directory to search (default: the workspace root).",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def __init__(self, backend: str | None = None) -> None:
        # "ripgrep" or "python" (tests, benches); None: AGENTCLI_SEARCH_BACKEND, else auto
        self.backend = backend

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return assess_path(ctx, ctx.workspace.resolve(args.get("path") or "."), "searches")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        from agentcli.tools.search_plan import in_thread, prepare
        from agentcli.tools.search_py import python_files
        from agentcli.tools.search_rg import rg_files, ripgrep

        pattern = args["pattern"]
        glob = _compile_glob(pattern)
        rg = ripgrep(self.backend)
        plan = await prepare(args, ctx, glob)
        try:
            if plan.target.is_file:
                raise ToolFailure(
                    f"{plan.target.shown} is a file; search_files needs a directory "
                    "(read it with read_file, or search inside it with search_content)"
                )
            listed: tuple[list[str], bool] | None = ([], False)
            if plan.start is not None:
                listed = await rg_files(rg, plan) if rg else None
                if listed is None:
                    listed = await in_thread(python_files, plan)
        finally:
            plan.cleanup()
        return _files_output(*listed, pattern, plan.target)


def _files_output(paths: list[str], truncated: bool, pattern: str, target: Target) -> ToolOutput:
    from agentcli.tools import search_rg

    if not paths:
        message = f"No files match {pattern!r} in {target.where()}."
        if "/" in pattern.rstrip("/") and target.rel:
            message += (
                " Globs containing a slash are matched from the workspace root, "
                f"e.g. '{target.rel}/**/{pattern.rsplit('/', 1)[-1]}'."
            )
        return ToolOutput(content=message, summary="no files")
    lines = [name_on_one_line(target.display(p)) for p in paths[:MAX_FILES]]  # a name is one line
    if len(paths) > MAX_FILES:
        lines.append(
            f"[{len(paths) - MAX_FILES} more files not shown; {len(paths)} match in all. "
            "Narrow the pattern or the path.]"
        )
    if truncated:
        lines.append(
            f"[ripgrep's listing passed {_megabytes(search_rg.RG_LISTING_LIMIT)} and was cut "
            "off; the list and the count are incomplete.]"
        )
    return ToolOutput(content=_printable("\n".join(lines)), summary=_plural(len(paths), "file"))


def _render(
    files: list[FileHits], context: int, max_results: int, target: Target
) -> tuple[list[str], int]:
    """ripgrep-style lines for the first `max_results` matches (files sorted by path,
    lines by number), with their context; returns the lines and the matches shown."""
    out: list[str] = []
    budget = max_results
    for hits in files:
        if budget <= 0:
            break
        records = hits.records()
        shown = [r.number for r in records if r.is_match][:budget]
        if not shown:
            continue
        budget -= len(shown)
        last = shown[-1]
        cutoff = next((r.number for r in records if r.is_match and r.number > last), None)
        path = name_on_one_line(_printable(target.display(hits.path)))
        if context and out:
            out.append("--")
        previous = None
        for r in records:
            if cutoff is not None and r.number >= cutoff:
                break
            if not r.is_match and r.number > last + context:
                break  # context of the last shown match ends here
            if context and previous is not None and r.number != previous + 1:
                out.append("--")
            sep = ":" if r.is_match else "-"
            out.append(f"{path}{sep}{r.number}{sep}{r.text}")
            previous = r.number
    return out, max_results - budget


def _content_output(
    files: list[FileHits],
    args: dict[str, Any],
    target: Target,
    context: int,
    max_results: int,
    truncated: bool,
) -> ToolOutput:
    from agentcli.tools import search_rg
    from agentcli.tools.search_py import has_nul

    files, withheld = _without_secrets(files, target)
    total = sum(f.matches for f in files)
    pattern = args["pattern"]
    if withheld:
        note = (
            f" Not shown: matches in {_plural(len(withheld), 'file')} that may hold secrets "
            f"({', '.join(withheld[:3])}); read one with read_file, which asks first."
        )
    else:
        note = ""
    if not files:
        glob = args.get("glob")
        scope = f" (files matching {glob!r})" if glob and not target.is_file else ""
        message = f"No matches for {pattern!r} in {target.where()}{scope}."
        # (the search's directory fds are closed by now: the file is named by its path)
        if target.is_file and has_nul(os.path.join(target.real_base or target.base, target.rel)):
            message += " It is a binary file (it has NUL bytes); binary files are not searched."
        if truncated:
            message += " (ripgrep's output was cut off; try a narrower search)"
        return ToolOutput(content=message + note, summary="no matches")
    lines, shown = _render(files, context, max_results, target)
    counts = f"{_plural(total, 'match')} in {_plural(len(files), 'file')}"
    header = counts
    if shown < total:
        header += f" (showing the first {shown})"
    if truncated:
        header += (
            f"; ripgrep's output passed {_megabytes(search_rg.RG_OUTPUT_LIMIT)} and was cut off, "
            "so results are incomplete and counts are lower bounds"
        )
    body = [header, *lines]
    if withheld:
        body.append(f"[{note.strip()}]")
    if shown < total:
        body.append(
            f"[{total - shown} more matching lines not shown (max_results={max_results}); "
            f"raise max_results (up to {MAX_RESULTS}) or narrow the pattern, path or glob.]"
        )
    return ToolOutput(content="\n".join(body), summary=counts)


def _without_secrets(files: list[FileHits], target: Target) -> tuple[list[FileHits], list[str]]:
    """A search over a directory does not show the lines of files that may hold secrets
    (`.env`, keys, credentials): they would go to the model's provider unasked. Searching
    one such file by name is its own call, and asks (agentcli.workspace.sensitive)."""
    if target.is_file:
        return files, []
    from pathlib import Path

    from agentcli.workspace.sensitive import read_secret_reason

    kept, withheld = [], []
    for hits in files:
        real = Path(target.real_base or target.base, hits.path)
        if read_secret_reason(real) is None:
            kept.append(hits)
        else:
            withheld.append(_printable(target.display(hits.path)))
    return kept, withheld


def _compile_regex(pattern: str, ignore_case: bool) -> tuple[Any, str | None]:
    """The pattern for the Python search (the `regex` module, in `re`'s dialect: it bounds
    a match's time, which `re` cannot), or why it does not compile."""
    import regex

    flags = regex.VERSION0 | (regex.IGNORECASE if ignore_case else 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "possible nested set" and the like
        try:
            return regex.compile(pattern, flags), None
        except regex.error as exc:
            return None, str(exc)
        except (OverflowError, RecursionError, ValueError) as exc:
            return None, str(exc) or type(exc).__name__


class SearchContent(PathTool):
    path_default = "."
    risk_summary = "low; high outside the workspace"
    name = "search_content"
    read_only = True
    description = (
        "Search file contents with a regular expression (ripgrep's syntax; look-around and "
        "backreferences work too). Returns matching lines as `path:LINE:text`, context "
        "lines as `path-LINE-text`, `--` between separate groups, sorted by path and line, "
        "under a header counting matches and files. Honours .gitignore files, skips .git "
        "and binary files, does not follow symlinks. Restrict files with `glob` (`*.py`, "
        "`src/**/*.ts`; a glob with a slash is matched from the workspace root) or `path` "
        "(a directory, or one file)."
    )
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "minLength": 1,
                "description": "Regular expression to search for, e.g. `def \\w+_handler`.",
            },
            "path": {
                "type": "string",
                "description": "Directory or file to search (default: the workspace root).",
            },
            "glob": {
                "type": "string",
                "minLength": 1,
                "description": "Only search files matching this glob, e.g. `*.py`.",
            },
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_CONTEXT,
                "description": "Lines of context before and after each match (default 0).",
            },
            "ignore_case": {
                "type": "boolean",
                "description": "Match case-insensitively (default false).",
            },
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_RESULTS,
                "description": f"Matching lines to return (default {DEFAULT_MAX_RESULTS}).",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def __init__(self, backend: str | None = None) -> None:
        # "ripgrep" or "python" (tests, benches); None: AGENTCLI_SEARCH_BACKEND, else auto
        self.backend = backend

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return assess_path(ctx, ctx.workspace.resolve(args.get("path") or "."), "searches")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        import asyncio

        from agentcli.tools.search_plan import prepare
        from agentcli.tools.search_rg import RgRejected, ripgrep

        pattern = args["pattern"]
        if "\n" in pattern:
            raise ToolFailure("the pattern contains a newline; lines are matched one at a time")
        if "\x00" in pattern:  # ripgrep cannot be given one; binary files are not searched
            raise ToolFailure("the pattern contains a NUL byte; binary files are not searched")
        context = min(max(int(args.get("context") or 0), 0), MAX_CONTEXT)
        max_results = min(max(int(args.get("max_results") or DEFAULT_MAX_RESULTS), 1), MAX_RESULTS)
        glob = _compile_glob(args["glob"]) if args.get("glob") else None
        # Compiled only where Python matches (what ripgrep rejects, or no ripgrep): the
        # regex module costs 18 ms to import, which a ripgrep search need not pay.
        compiled = functools.cache(lambda: _compile_regex(pattern, bool(args.get("ignore_case"))))
        rg = ripgrep(self.backend)
        plan = await prepare(args, ctx, glob)
        try:
            files, truncated = await _search(plan, rg, args, compiled, context, max_results)
        except RgRejected:
            raise ToolFailure(f"invalid regular expression {pattern!r}: {compiled()[1]}") from None
        finally:
            plan.cleanup()
        return await asyncio.to_thread(
            _content_output, files, args, plan.target, context, max_results, truncated
        )


async def _search(
    plan: Plan,
    rg: str | None,
    args: dict[str, Any],
    compiled: Callable[[], tuple[Any, str | None]],
    context: int,
    max_results: int,
) -> tuple[list[FileHits], bool]:
    """ripgrep where it is installed; Python's matching (`compiled`: the pattern, or None
    and why it does not compile) for a regular expression ripgrep rejects, over the files
    ripgrep lists; the Python walk only without ripgrep."""
    from agentcli.tools.search_plan import in_thread
    from agentcli.tools.search_py import MATCH_SECONDS, python_content
    from agentcli.tools.search_rg import RgRejected, rg_content, rg_files

    if plan.start is None:
        if compiled()[0] is None:
            raise RgRejected
        return [], False
    listed: list[str] | None = None
    truncated = False
    if rg is not None:
        try:
            result = await rg_content(rg, plan, args, context)
        except RgRejected:
            if compiled()[0] is None:
                raise
            # Python accepts what ripgrep does not (look-around): ripgrep still
            # decides which files are searched.
            result = None
            if not plan.target.is_file:
                listing = await rg_files(rg, plan)
                if listing is not None:
                    listed, truncated = listing
        if result is not None:
            return result
    if compiled()[0] is None:
        raise RgRejected
    try:
        files = await in_thread(python_content, plan, compiled()[0], context, max_results, listed)
    except TimeoutError:
        raise ToolFailure(
            f"the pattern took more than {MATCH_SECONDS:g} s to match, so the search was "
            "stopped; nested repeats such as (a+)+ or (a|aa)+ backtrack without end: "
            "simplify it"
        ) from None
    return files, truncated


__all__ = ["SearchContent", "SearchFiles"]
