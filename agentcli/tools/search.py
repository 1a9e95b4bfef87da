"""search_files (find files by glob) and search_content (grep by regular expression).

This module is the tools: arguments, what to search, and the output. Two backends give
identical results: the ripgrep binary when there is one (agentcli.tools.search_rg: fast,
parallel), and a pure-Python walk (agentcli.tools.search_py) when there is not, or for a
regular expression ripgrep rejects but Python's `re` accepts (look-around, backreferences).
ripgrep's output is collected and sorted, so the order never depends on its threads.

The shared rules: `.gitignore` files are honoured at every level, with or without git;
entries named `.git` and symlinks are skipped; hidden files are searched; a file with a NUL
byte anywhere is binary and skipped (ripgrep reports those as `binary_offset`, so both
backends can apply the same rule); lines are split on `\\n` only and decoded lossily.

Known, accepted difference: on a line that is not valid UTF-8, ripgrep never matches the
invalid bytes while Python matches the U+FFFD that replaced them (so `caf.` finds `caf\\xe9`
only in the fallback). Regular expression dialects differ in corners too (`[[:alpha:]]`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import stat
import tempfile
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentcli.tools.base import Assessment, ToolContext, ToolFailure, ToolOutput
from agentcli.tools.files import PathTool, assess_path
from agentcli.tools.ignore import GlobError, SearchGlob, Tree
from agentcli.tools.search_hits import FileHits, _has_nul
from agentcli.tools.search_py import _python_content, _python_files
from agentcli.tools.search_rg import (
    RG_LISTING_LIMIT,
    RG_OUTPUT_LIMIT,
    _rg_content,
    _rg_files,
    _RgRejected,
    find_ripgrep,
)

MAX_FILES = 1000  # paths search_files returns
DEFAULT_MAX_RESULTS = 100  # matching lines search_content returns
MAX_RESULTS = 1000
MAX_CONTEXT = 10

# Which backend to use: "ripgrep", "python", or None/"auto" for ripgrep when it is
# installed. The module switch wins over the environment variable; tests set either.
BACKEND_ENV = "AGENTCLI_SEARCH_BACKEND"
FORCE_BACKEND: str | None = None


def _ripgrep() -> str | None:
    """The ripgrep to use, or None for the Python backend."""
    choice = (FORCE_BACKEND or os.environ.get(BACKEND_ENV) or "auto").lower()
    if choice == "python":
        return None
    found = find_ripgrep()
    if choice in ("ripgrep", "rg") and found is None:
        raise ToolFailure(f"{BACKEND_ENV} asks for ripgrep, but no `rg` was found")
    return found


def _printable(text: str) -> str:
    # File names that are not UTF-8 arrive with surrogate escapes; show them lossily.
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.3g} MB"


def _plural(n: int, word: str) -> str:
    if word == "match":
        return f"{n} match" if n == 1 else f"{n} matches"
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# ---------------------------------------------------------------------------------------
# What to search


@dataclass(frozen=True, slots=True)
class Target:
    """A resolved `path` argument. Results are paths relative to `base`: the workspace root
    for a path inside it; the searched directory (or a file's parent) outside it."""

    base: str
    rel: str  # the searched path relative to base; "" for base itself
    is_file: bool
    inside: bool
    shown: str  # the path as the user gave it, for messages

    def display(self, rel: str) -> str:
        return rel if self.inside else os.path.join(self.base, rel)

    def where(self) -> str:
        return "the workspace" if self.inside and not self.rel else self.shown


def _resolve(args: dict[str, Any], ctx: ToolContext) -> Target:
    requested = args.get("path") or "."
    # Resolve again right before searching: the file system may have changed since assess.
    resolved = ctx.workspace.resolve(requested)
    path = resolved.path
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise ToolFailure(f"no such file or directory: {requested}") from None
    except OSError as exc:
        raise ToolFailure(f"cannot access {requested}: {exc.strerror}") from None
    is_file = stat.S_ISREG(mode)
    if not is_file and not stat.S_ISDIR(mode):
        raise ToolFailure(f"{requested} is neither a regular file nor a directory")
    if resolved.inside:
        rel = path.relative_to(ctx.workspace.root).as_posix()
        return Target(str(ctx.workspace.root), "" if rel == "." else rel, is_file, True, requested)
    if is_file:
        return Target(str(path.parent), path.name, True, False, requested)
    return Target(str(path), "", False, False, requested)


def _compile_glob(glob: str) -> SearchGlob:
    try:
        return SearchGlob(glob)
    except GlobError as exc:
        raise ToolFailure(f"invalid glob {glob!r}: {exc}") from None


def _start(target: Target, glob: SearchGlob | None) -> str | None:
    """Where a walk has to start: the target, or a directory below it when the glob is
    anchored there (`src/app/**/*.py` needs only src/app). None: nothing can match."""
    if glob is None:
        return target.rel
    if glob.rule.dir_only and not glob.negated:
        return None  # a glob ending in `/` matches directories, never a file
    prefix = glob.anchored_prefix
    if not prefix or prefix == target.rel:
        return target.rel
    if target.rel and not prefix.startswith(target.rel + "/"):
        return target.rel if target.rel.startswith(prefix + "/") else None
    # Start lower only if the walk itself would get there: real directories (no symlinks)
    # that are neither ignored nor excluded by the glob.
    current = target.rel
    for step in prefix[len(target.rel) :].strip("/").split("/"):
        current = f"{current}/{step}" if current else step
        try:
            if not stat.S_ISDIR(os.lstat(os.path.join(target.base, current)).st_mode):
                return None
        except OSError:
            return None
    return prefix if Tree(target.base, target.rel, glob).enters(prefix) else None


@dataclass(slots=True)
class _Plan:
    """A search prepared off the event loop: what to search and, for ripgrep, the flags
    that select the same files as the Python walk."""

    target: Target
    start: str | None  # where the walk starts; None when nothing can match
    glob: SearchGlob | None
    rg_args: list[str] = field(default_factory=list)
    ignore_file: str | None = None  # a temporary file to remove afterwards
    binary: bool = False  # the target is a file with a NUL byte

    def cleanup(self) -> None:
        if self.ignore_file is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.ignore_file)


async def _prepare(
    args: dict[str, Any], ctx: ToolContext, glob: SearchGlob | None, rg: bool
) -> _Plan:
    """_plan in a thread. If the caller is cancelled meanwhile, the plan still gets
    cleaned up (it may have written a temporary file) once the thread is done."""
    future = asyncio.ensure_future(asyncio.to_thread(_plan, args, ctx, glob, rg))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        future.add_done_callback(_cleanup_abandoned)
        raise


def _cleanup_abandoned(future: asyncio.Future[_Plan]) -> None:
    if not future.cancelled() and future.exception() is None:
        future.result().cleanup()


def _plan(args: dict[str, Any], ctx: ToolContext, glob: SearchGlob | None, rg: bool) -> _Plan:
    target = _resolve(args, ctx)
    if target.is_file:
        plan = _Plan(target, target.rel, None)
        if rg:
            # ripgrep searches a file named on its command line even when it is binary;
            # the Python backend checks while reading.
            plan.binary = _has_nul(os.path.join(target.base, target.rel)) is not False
        return plan
    plan = _Plan(target, _start(target, glob), glob)
    if not rg or plan.start is None:
        return plan
    rules = ""
    if glob is not None and not glob.negated:
        # As `-g`, a glob would override .gitignore (`rg --files -g '*.log'` lists ignored
        # logs). As ignore rules below all others ("ignore every file, keep directories,
        # keep what matches") it only filters; .gitignore negations that still get through
        # are filtered out afterwards.
        rules = f"*\n!*/\n!/{glob.rule.glob}\n"
    tree = Tree(target.base, plan.start, glob)
    if tree.ancestors:  # ripgrep runs with --no-ignore-parent; pass the ones it needs
        rules += tree.ancestor_ignore_text()
    if rules:
        fd, plan.ignore_file = tempfile.mkstemp(prefix="agentcli-search-", suffix=".ignore")
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(rules)
        plan.rg_args += ["--ignore-file", plan.ignore_file]
    if glob is not None and glob.negated:  # an excluding glob overrides nothing
        plan.rg_args += ["-g", glob.text]
    plan.rg_args += ["-g", "!.git"]
    return plan


# ---------------------------------------------------------------------------------------
# search_files


class SearchFiles(PathTool):
    path_default = "."
    risk_summary = "low; high outside the workspace"
    name = "search_files"
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

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return assess_path(ctx.workspace.resolve(args.get("path") or "."), "searches")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        pattern = args["pattern"]
        glob = _compile_glob(pattern)
        rg = _ripgrep()
        plan = await _prepare(args, ctx, glob, rg is not None)
        try:
            if plan.target.is_file:
                raise ToolFailure(
                    f"{plan.target.shown} is a file; search_files needs a directory "
                    "(read it with read_file, or search inside it with search_content)"
                )
            listed: tuple[list[str], bool] | None = ([], False)
            if plan.start is not None:
                listed = await _rg_files(rg, plan) if rg else None
                if listed is None:
                    listed = await _in_thread(_python_files, plan)
        finally:
            plan.cleanup()
        return _files_output(*listed, pattern, plan.target)


def _files_output(paths: list[str], truncated: bool, pattern: str, target: Target) -> ToolOutput:
    if not paths:
        message = f"No files match {pattern!r} in {target.where()}."
        if "/" in pattern.rstrip("/") and target.rel:
            message += (
                " Globs containing a slash are matched from the workspace root, "
                f"e.g. '{target.rel}/**/{pattern.rsplit('/', 1)[-1]}'."
            )
        return ToolOutput(content=message, summary="no files")
    lines = [target.display(p) for p in paths[:MAX_FILES]]
    if len(paths) > MAX_FILES:
        lines.append(
            f"[{len(paths) - MAX_FILES} more files not shown; {len(paths)} match in all. "
            "Narrow the pattern or the path.]"
        )
    if truncated:
        lines.append(
            f"[ripgrep's listing passed {_megabytes(RG_LISTING_LIMIT)} and was cut "
            "off; the list and the count are incomplete.]"
        )
    return ToolOutput(content=_printable("\n".join(lines)), summary=_plural(len(paths), "file"))


async def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Runs blocking work in a thread; if the caller is cancelled, the work stops at its
    next check of the `stop` callable it gets as the last argument."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(fn, *args, stop.is_set)
    finally:
        stop.set()


# ---------------------------------------------------------------------------------------
# search_content


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
        path = _printable(target.display(hits.path))
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
    total = sum(f.matches for f in files)
    pattern = args["pattern"]
    if not files:
        glob = args.get("glob")
        scope = f" (files matching {glob!r})" if glob and not target.is_file else ""
        message = f"No matches for {pattern!r} in {target.where()}{scope}."
        if target.is_file and _has_nul(os.path.join(target.base, target.rel)):
            message += " It is a binary file (it has NUL bytes); binary files are not searched."
        if truncated:
            message += " (ripgrep's output was cut off; try a narrower search)"
        return ToolOutput(content=message, summary="no matches")
    lines, shown = _render(files, context, max_results, target)
    counts = f"{_plural(total, 'match')} in {_plural(len(files), 'file')}"
    header = counts
    if shown < total:
        header += f" (showing the first {shown})"
    if truncated:
        header += (
            f"; ripgrep's output passed {_megabytes(RG_OUTPUT_LIMIT)} and was cut off, "
            "so results are incomplete and counts are lower bounds"
        )
    body = [header, *lines]
    if shown < total:
        body.append(
            f"[{total - shown} more matching lines not shown (max_results={max_results}); "
            f"raise max_results (up to {MAX_RESULTS}) or narrow the pattern, path or glob.]"
        )
    return ToolOutput(content="\n".join(body), summary=counts)


def _compile_regex(pattern: str, ignore_case: bool) -> tuple[re.Pattern[str] | None, str | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "possible nested set" and the like
        try:
            return re.compile(pattern, re.IGNORECASE if ignore_case else 0), None
        except re.error as exc:
            return None, str(exc)
        except (OverflowError, RecursionError) as exc:
            return None, str(exc) or type(exc).__name__


class SearchContent(PathTool):
    path_default = "."
    risk_summary = "low; high outside the workspace"
    name = "search_content"
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

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return assess_path(ctx.workspace.resolve(args.get("path") or "."), "searches")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        pattern = args["pattern"]
        if "\n" in pattern:
            raise ToolFailure("the pattern contains a newline; lines are matched one at a time")
        context = min(max(int(args.get("context") or 0), 0), MAX_CONTEXT)
        max_results = min(max(int(args.get("max_results") or DEFAULT_MAX_RESULTS), 1), MAX_RESULTS)
        glob = _compile_glob(args["glob"]) if args.get("glob") else None
        regex, regex_error = _compile_regex(pattern, bool(args.get("ignore_case")))
        rg = _ripgrep()
        plan = await _prepare(args, ctx, glob, rg is not None)
        try:
            files, truncated = await self._search(plan, rg, args, regex, context, max_results)
        except _RgRejected:
            raise ToolFailure(f"invalid regular expression {pattern!r}: {regex_error}") from None
        finally:
            plan.cleanup()
        return await asyncio.to_thread(
            _content_output, files, args, plan.target, context, max_results, truncated
        )

    @staticmethod
    async def _search(
        plan: _Plan,
        rg: str | None,
        args: dict[str, Any],
        regex: re.Pattern[str] | None,
        context: int,
        max_results: int,
    ) -> tuple[list[FileHits], bool]:
        if rg is not None and plan.start is not None and not plan.binary:
            try:
                result = await _rg_content(rg, plan, args, context)
            except _RgRejected:
                if regex is None:
                    raise
                result = None  # Python's re accepts what ripgrep does not (look-around)
            if result is not None:
                return result
        if regex is None:
            raise _RgRejected
        if plan.start is None or plan.binary:
            return [], False
        files = await _in_thread(_python_content, plan, regex, context, max_results)
        return files, False


__all__ = ["SearchContent", "SearchFiles", "find_ripgrep"]
