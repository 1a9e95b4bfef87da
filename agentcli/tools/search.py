"""search_files (find files by glob) and search_content (grep by regular expression).

Two backends give identical results: the ripgrep binary when there is one (fast, parallel)
for a search of a whole directory tree it can run in (it is given no path it would resolve
again), and a pure-Python walk (agentcli.tools.ignore) that reads the searched directory
through its open fd, for a subdirectory or a file, without ripgrep, or for a regular
expression ripgrep rejects but Python's `re` accepts (look-around, backreferences).
ripgrep's output is collected and sorted here, so the order never depends on its threads.

The shared rules: `.gitignore` files are honoured at every level, with or without git;
entries named `.git` and symlinks are skipped; hidden files are searched; a file with a NUL
byte anywhere is binary and skipped (ripgrep reports those as `binary_offset`, so both
backends can apply the same rule); lines are split on `\\n` only and decoded lossily.

Known, accepted difference: on a line that is not valid UTF-8, ripgrep never matches the
invalid bytes while Python matches the U+FFFD that replaced them (so `caf.` finds `caf\\xe9`
only in the fallback). Regular expression dialects differ in corners too (`[[:alpha:]]`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import stat
import sysconfig
import tempfile
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from agentcli.safe_open import UnsafePath, open_directory, open_parent, open_regular
from agentcli.tools.base import Assessment, ToolContext, ToolFailure, ToolOutput
from agentcli.tools.files import PathTool, assess_path, walk_base
from agentcli.tools.ignore import GlobError, SearchGlob, Tree

if TYPE_CHECKING:
    import asyncio

MAX_FILES = 1000  # paths search_files returns
DEFAULT_MAX_RESULTS = 100  # matching lines search_content returns
MAX_RESULTS = 1000
MAX_CONTEXT = 10
MAX_LINE_CHARS = 500  # longer lines are cut, keeping the match in view
_LEAD_CHARS = 100  # how much of a long line to keep before the match
RG_OUTPUT_LIMIT = 32 * 1024 * 1024  # search output read before ripgrep is stopped
RG_LISTING_LIMIT = 256 * 1024 * 1024  # the same for a file listing (all paths are needed)
_WHOLE_FILE_BYTES = 16 * 1024 * 1024  # the fallback reads smaller files in one go

# Which backend to use: "ripgrep", "python", or None/"auto" for ripgrep when it is
# installed. The module switch wins over the environment variable; tests set either.
BACKEND_ENV = "AGENTCLI_SEARCH_BACKEND"
FORCE_BACKEND: str | None = None

# Flags that make ripgrep list what agentcli.tools.ignore.Tree lists. --no-ignore-parent
# keeps it from reading .gitignore files above the workspace; those between the workspace
# root and a searched subdirectory are passed with --ignore-file instead.
_RG_COMMON = (
    "--no-config",
    "--no-require-git",
    "--hidden",
    "--no-ignore-global",
    "--no-ignore-dot",
    "--no-ignore-exclude",
    "--no-ignore-parent",
    "--no-messages",
    "--no-ignore-messages",
)
_RG_ENV_KEYS = ("PATH", "HOME", "LANG", "LC_ALL")

# A per-line match implies a match of the whole text in MULTILINE mode unless the pattern
# can look past a line's ends; only then is the cheap whole-file pre-check skipped.
_LOOKS_AROUND = ("(?=", "(?!", "(?<=", "(?<!", "\\A", "\\Z", "(?-", "(?(")


def find_ripgrep() -> str | None:
    """The `rg` next to this interpreter (the ripgrep wheel puts it there), else on PATH."""
    name = "rg.exe" if os.name == "nt" else "rg"
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidate = os.path.join(scripts, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which(name)


def _ripgrep() -> str | None:
    """The ripgrep to use, or None for the Python backend."""
    choice = (FORCE_BACKEND or os.environ.get(BACKEND_ENV) or "auto").lower()
    if choice == "python":
        return None
    found = find_ripgrep()
    if choice in ("ripgrep", "rg") and found is None:
        raise ToolFailure(f"{BACKEND_ENV} asks for ripgrep, but no `rg` was found")
    return found


def _rg_env() -> dict[str, str]:
    # Only what ripgrep needs: no API keys or tokens reach the child process.
    return {key: os.environ[key] for key in _RG_ENV_KEYS if key in os.environ}


def _sort_key(rel: str) -> str:
    # NUL sorts before every other character, so this orders paths component by component,
    # which is also the order of a walk that visits names sorted.
    return rel.replace("/", "\0")


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
    real_base: str = ""  # base as shown; `base` itself may name the open directory fd
    fd: int = -1  # base, held open for the search (closed by _Plan.cleanup)
    pin_rel: str = ""  # the searched directory (a file's parent), relative to base...
    pin: str = ""  # ...and a path naming it opened, so a swapped symlink cannot move it
    pin_fd: int = -1

    def display(self, rel: str) -> str:
        return rel if self.inside else os.path.join(self.real_base or self.base, rel)

    def path_of(self, rel: str) -> str:
        """Where `rel` (relative to base) is read from: through the pinned directory when
        it is below it."""
        if self.pin and rel == self.pin_rel:
            return self.pin
        if self.pin and rel.startswith(self.pin_rel + "/"):
            return os.path.join(self.pin, rel[len(self.pin_rel) + 1 :])
        return os.path.join(self.base, rel) if rel else self.base

    def where(self) -> str:
        return "the workspace" if self.inside and not self.rel else self.shown


class _PinnedTree(Tree):
    """A Tree that reads the searched directory through its open fd."""

    def __init__(self, target: Target, start: str, glob: SearchGlob | None = None) -> None:
        self.target = target
        super().__init__(target.base, start, glob)

    def path(self, rel: str) -> str:
        return self.target.path_of(rel)


def _resolve(args: dict[str, Any], ctx: ToolContext) -> Target:
    requested = args.get("path") or "."
    # Resolve again right before searching: the file system may have changed since assess.
    # A search approved as one inside the workspace stays there (files.walk_base), and the
    # path is reached without following symlinks, as the file tools do.
    resolved = ctx.workspace.resolve(requested)
    path = resolved.path
    walk_from = walk_base(ctx, resolved, requested, writing=False)
    try:
        mode = stat.S_IFDIR if path == walk_from else _lstat_beneath(path, walk_from).st_mode
    except FileNotFoundError:
        raise ToolFailure(f"no such file or directory: {requested}") from None
    except UnsafePath as exc:
        raise ToolFailure(f"{requested}: {exc.strerror}") from None
    except OSError as exc:
        raise ToolFailure(f"cannot access {requested}: {exc.strerror}") from None
    is_file = stat.S_ISREG(mode)
    if not is_file and not stat.S_ISDIR(mode):
        raise ToolFailure(f"{requested} is neither a regular file nor a directory")
    if resolved.inside:
        rel = path.relative_to(ctx.workspace.root).as_posix()
        base, rel = ctx.workspace.root, "" if rel == "." else rel
    else:
        base, rel = (path.parent, path.name) if is_file else (path, "")
    fd = open_directory(base, walk_from)
    target = Target(_fd_dir(fd, base), rel, is_file, resolved.inside, requested, str(base), fd)
    pin_rel = rel.rpartition("/")[0] if is_file else rel
    if pin_rel:
        try:
            pin_fd = open_directory(path.parent if is_file else path, walk_from)
        except OSError as exc:
            os.close(fd)
            raise ToolFailure(f"{requested}: {exc.strerror}") from None
        target = replace(target, pin_rel=pin_rel, pin=_fd_dir(pin_fd, ""), pin_fd=pin_fd)
    return target


def _lstat_beneath(path: Any, walk_from: Any) -> os.stat_result:
    dir_fd = open_parent(path, walk_from)
    try:
        info = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
    finally:
        os.close(dir_fd)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(0, "it became a symbolic link after it was checked; not following it")
    return info


def _fd_dir(fd: int, fallback: Any) -> str:
    """A path naming the open directory itself, so the search (ripgrep's working directory
    included) cannot be redirected after the check: /proc/self/fd/N where there is one."""
    by_fd = f"/proc/self/fd/{fd}"
    return by_fd if os.path.isdir(by_fd) else str(fallback)


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
    _check_glob_stays_inside(glob)
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
            if not stat.S_ISDIR(os.lstat(target.path_of(current)).st_mode):
                return None
        except OSError:
            return None
    return prefix if _PinnedTree(target, target.rel, glob).enters(prefix) else None


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
    # ripgrep walks from its working directory, the opened root: only a search of the
    # whole workspace (or an outside directory) can use it without a path it would
    # resolve again; a subdirectory or a file is searched by the pinned Python walk.
    use_rg: bool = True

    def cleanup(self) -> None:
        for fd in (self.target.fd, self.target.pin_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        if self.ignore_file is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.ignore_file)


async def _prepare(
    args: dict[str, Any], ctx: ToolContext, glob: SearchGlob | None, rg: bool
) -> _Plan:
    """_plan in a thread. If the caller is cancelled meanwhile, the plan still gets
    cleaned up (it may have written a temporary file) once the thread is done."""
    import asyncio

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
        plan.use_rg = False  # one file: read through its pinned directory (no name to swap)
        return plan
    plan = _Plan(target, _start(target, glob), glob)
    plan.use_rg = rg and not target.rel
    if not plan.use_rg or plan.start is None:
        return plan
    plan.start = ""  # ripgrep gets "." (the open root), never a path below it
    rules = ""
    if glob is not None and not glob.negated:
        # As `-g`, a glob would override .gitignore (`rg --files -g '*.log'` lists ignored
        # logs). As ignore rules below all others ("ignore every file, keep directories,
        # keep what matches") it only filters; .gitignore negations that still get through
        # are filtered out afterwards.
        rules = f"*\n!*/\n!/{glob.rule.glob}\n"
    tree = _PinnedTree(target, plan.start, glob)
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
# Running ripgrep


@dataclass(slots=True)
class _RgRun:
    out: bytes
    err: str
    code: int | None
    truncated: bool


class _RgRejected(Exception):
    """ripgrep refused the search (most likely the regular expression)."""


async def _read_capped(stream: asyncio.StreamReader, keep: int) -> bytes:
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < keep:
            kept += chunk[: keep - len(kept)]
    return bytes(kept)


async def _run_rg(rg: str, args: list[str], cwd: str, limit: int | None = None) -> _RgRun:
    """Runs ripgrep without a shell and reads at most `limit` bytes of its output
    (default RG_OUTPUT_LIMIT), killing it beyond that. The process is killed too if the
    calling task is cancelled."""
    import asyncio

    limit = RG_OUTPUT_LIMIT if limit is None else limit
    proc = await asyncio.create_subprocess_exec(
        rg,
        *args,
        cwd=cwd,
        env=_rg_env(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    errors = asyncio.ensure_future(_read_capped(proc.stderr, 16384))
    chunks: list[bytes] = []
    size = 0
    truncated = False
    try:
        while chunk := await proc.stdout.read(1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                truncated = True
                proc.kill()
                break
        err = await errors
        code = await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        errors.cancel()
    return _RgRun(b"".join(chunks), err.decode("utf-8", "replace"), code, truncated)


def _rg_refused(run: _RgRun) -> bool:
    """Whether ripgrep refused the search (a pattern or glob it rejects) or crashed. Exit
    code 2 with nothing on stderr only means some files were unreadable (--no-messages).
    What it said is not used: error messages come from Python's `re` for both backends."""
    if run.truncated or run.code in (0, 1):
        return False
    return run.code != 2 or bool(run.err.strip())


def _open_regular(path: str) -> Any:
    """A file the walk found, opened only if it still is a regular file (not a symlink or a
    FIFO swapped in since, which would redirect or block the search)."""
    head, name = os.path.split(path)
    dir_fd = os.open(head or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        return os.fdopen(open_regular(dir_fd, name), "rb")
    finally:
        os.close(dir_fd)


def _has_nul(path: str) -> bool | None:
    """Whether a file has a NUL byte anywhere (None: unreadable); read in chunks."""
    try:
        with _open_regular(path) as f:
            while chunk := f.read(1 << 20):
                if b"\0" in chunk:
                    return True
    except OSError:
        return None
    return False


# ---------------------------------------------------------------------------------------
# search_files


def _python_files(plan: _Plan, stop: Callable[[], bool]) -> tuple[list[str], bool]:
    assert plan.start is not None
    return list(_PinnedTree(plan.target, plan.start, plan.glob).walk(stop)), False


async def _rg_files(rg: str, plan: _Plan) -> tuple[list[str], bool] | None:
    """Lists the files with ripgrep; None when it failed (use the fallback)."""
    import asyncio

    assert plan.start is not None and plan.glob is not None
    args = ["--files", "--null", *_RG_COMMON, *plan.rg_args, "--", plan.start or "."]
    try:
        run = await _run_rg(rg, args, plan.target.base, limit=RG_LISTING_LIMIT)
    except OSError:
        return None
    if _rg_refused(run):
        return None
    return await asyncio.to_thread(_filter_listing, run.out, plan.glob), run.truncated


def _filter_listing(out: bytes, glob: SearchGlob) -> list[str]:
    # ripgrep prints `./x` for a search of `.`; strip that before splitting (faster).
    paths = os.fsdecode(out.replace(b"\0./", b"\0").removeprefix(b"./")).split("\0")
    paths.pop()  # after the last NUL: empty, or a path cut off by the limit
    if glob.negated:
        kept = [p for p in paths if glob.admits_file(p)]
    else:
        match = glob.rule.regex.fullmatch
        kept = [p for p in paths if match(p)]
    kept.sort(key=_sort_key)
    return kept


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
                listed = await _rg_files(rg, plan) if rg and plan.use_rg else None
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
    import asyncio

    stop = threading.Event()
    try:
        return await asyncio.to_thread(fn, *args, stop.is_set)
    finally:
        stop.set()


# ---------------------------------------------------------------------------------------
# search_content: results


@dataclass(slots=True)
class Line:
    number: int
    is_match: bool
    text: str  # ready to show: no line terminator, long lines cut


@dataclass(slots=True)
class FileHits:
    """One file's matching lines (and context), from either backend."""

    path: str  # relative to the target's base
    matches: int  # matching lines in the file
    lines: list[Line] = field(default_factory=list)
    raw: list[bytes] | None = None  # ripgrep's JSON records, parsed only if shown

    def records(self) -> list[Line]:
        if self.raw is not None:
            self.lines = [_parse_rg_record(record) for record in self.raw]
            self.raw = None
        return self.lines


def _clip(text: str, column: int) -> str:
    """Cuts a line to MAX_LINE_CHARS characters, keeping the match at `column` in view."""
    if len(text) <= MAX_LINE_CHARS:
        return text
    start = max(0, min(column - _LEAD_CHARS, len(text) - MAX_LINE_CHARS))
    end = start + MAX_LINE_CHARS
    return (
        ("[…] " if start else "")
        + text[start:end]
        + (" [… line truncated]" if end < len(text) else "")
    )


def _display(line: str, column: int) -> str:
    return _clip(line[:-1] if line.endswith("\r") else line, column)


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
        if target.is_file and _has_nul(os.path.join(target.real_base or target.base, target.rel)):
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


# ---------------------------------------------------------------------------------------
# search_content: ripgrep backend


def _rg_path(value: dict[str, str]) -> str:
    # Paths that are not UTF-8 come base64-encoded.
    path = value["text"] if "text" in value else os.fsdecode(base64.b64decode(value["bytes"]))
    return path[2:] if path.startswith("./") else path


def _rg_line(value: dict[str, str]) -> str:
    if "text" in value:
        text = value["text"]
    else:
        text = base64.b64decode(value["bytes"]).decode("utf-8", "replace")
    return text[:-1] if text.endswith("\n") else text


def _parse_rg_record(record: bytes) -> Line:
    data = json.loads(record)["data"]
    text = _rg_line(data["lines"])
    is_match = record.startswith(b'{"type":"match"')
    column = 0
    if is_match and len(text) > MAX_LINE_CHARS and data["submatches"]:
        # ripgrep counts bytes; the cut is made in characters.
        start = data["submatches"][0]["start"]
        lines = data["lines"]
        raw = lines["text"].encode() if "text" in lines else base64.b64decode(lines["bytes"])
        column = len(raw[:start].decode("utf-8", "replace"))
    return Line(data["line_number"], is_match, _display(text, column))


def _parse_rg_json(out: bytes) -> list[FileHits]:
    """Groups ripgrep's --json records by file. ripgrep writes each file's records together
    (begin, match/context lines, end). Files whose end record has a binary_offset had a NUL
    byte after their first matches: dropped. An unfinished last file is dropped too."""
    files: list[FileHits] = []
    current: FileHits | None = None
    raw: list[bytes] = []
    for record in out.split(b"\n"):
        if record.startswith(b'{"type":"match"'):
            raw.append(record)
            if current is not None:
                current.matches += 1
        elif record.startswith(b'{"type":"context"'):
            raw.append(record)
        elif record.startswith(b'{"type":"begin"'):
            current = FileHits(_rg_path(json.loads(record)["data"]["path"]), 0)
            raw = []
        elif record.startswith(b'{"type":"end"'):
            if current is not None and b'"binary_offset":null' in record and current.matches:
                current.raw = raw
                files.append(current)
            current = None
    return files


async def _rg_content(
    rg: str, plan: _Plan, args: dict[str, Any], context: int
) -> tuple[list[FileHits], bool] | None:
    """Searches with ripgrep. None: ripgrep failed, use the fallback. Raises _RgRejected
    when ripgrep refused the pattern."""
    import asyncio

    assert plan.start is not None
    cmd = ["--json", *_RG_COMMON, "--no-mmap", "--encoding", "none", *plan.rg_args]
    cmd.append("--ignore-case" if args.get("ignore_case") else "--case-sensitive")
    if context:
        cmd += ["--context", str(context)]
    cmd += ["-e", args["pattern"], "--", plan.start or "."]
    try:
        run = await _run_rg(rg, cmd, plan.target.base)
    except OSError:
        return None
    if _rg_refused(run):
        raise _RgRejected
    return await asyncio.to_thread(_finish_rg_content, run.out, plan.glob), run.truncated


def _finish_rg_content(out: bytes, glob: SearchGlob | None) -> list[FileHits]:
    files = _parse_rg_json(out)
    if glob is not None:  # what a .gitignore negation let through
        files = [f for f in files if glob.admits_file(f.path)]
    files.sort(key=lambda f: _sort_key(f.path))
    return files


# ---------------------------------------------------------------------------------------
# search_content: Python backend


class _Binary(Exception):
    pass


def _stream_lines(stream: Iterable[bytes]) -> Iterator[str]:
    for raw in stream:
        if b"\0" in raw:
            raise _Binary
        yield raw.removesuffix(b"\n").decode("utf-8", "replace")


def _scan(lines: Iterable[str], search: Callable[[str], Any], context: int, keep: int) -> FileHits:
    """Counts the matching lines and records the first `keep` with their context; the
    context after the last recorded match stops at the next match (as in _render)."""
    hits = FileHits("", 0)
    records = hits.lines
    before: deque[tuple[int, str]] = deque(maxlen=context)
    after = 0
    numbered = enumerate(lines, 1)
    for number, line in numbered:
        match = search(line)
        if match:
            hits.matches += 1
            if hits.matches > keep:
                # Recorded all we may: count the rest.
                hits.matches += sum(1 for _, rest in numbered if search(rest))
                break
            records.extend(Line(n, False, _display(text, 0)) for n, text in before)
            before.clear()
            records.append(Line(number, True, _display(line, match.start())))
            after = context
        elif after:
            records.append(Line(number, False, _display(line, 0)))
            after -= 1
        elif context:
            before.append((number, line))
    return hits


def _scan_file(
    path: str, regex: re.Pattern[str], whole: re.Pattern[str] | None, context: int, keep: int
) -> FileHits | None:
    """One file's hits; None for a binary or unreadable file."""
    try:
        with _open_regular(path) as f:
            if os.fstat(f.fileno()).st_size > _WHOLE_FILE_BYTES:
                return _scan(_stream_lines(f), regex.search, context, keep)
            data = f.read()
    except _Binary:
        return None
    except OSError:
        return None
    if b"\0" in data:
        return None
    text = data.decode("utf-8", "replace")
    if whole is not None and whole.search(text) is None:
        return FileHits("", 0)
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # after the final newline
    return _scan(lines, regex.search, context, keep)


def _python_content(
    plan: _Plan,
    regex: re.Pattern[str],
    context: int,
    max_results: int,
    stop: Callable[[], bool],
) -> list[FileHits]:
    target = plan.target
    assert plan.start is not None
    whole = None
    if not any(marker in regex.pattern for marker in _LOOKS_AROUND):
        whole = re.compile(regex.pattern, regex.flags | re.MULTILINE)
    if target.is_file:
        paths: Iterable[str] = [target.rel]
    else:
        paths = _PinnedTree(target, plan.start, plan.glob).walk(stop)
    files = []
    budget = max_results
    for rel in paths:  # in sorted order, so only the first max_results need recording
        if stop():
            break
        hits = _scan_file(target.path_of(rel), regex, whole, context, budget)
        if hits is None or not hits.matches:
            continue
        hits.path = rel
        budget = max(0, budget - hits.matches)
        files.append(hits)
    return files


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
        import asyncio

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
        if rg is not None and plan.use_rg and plan.start is not None and not plan.binary:
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
