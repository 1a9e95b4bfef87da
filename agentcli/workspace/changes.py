"""What this session's file tools changed in the workspace, for the REPL's `/diff`: each
file's content from before the session first wrote it, kept when a tool is about to write
it, and diffed against what is there now. Changes made by shell commands are not seen
here; `/diff` adds `git diff` for those when the workspace is a git repository."""

from __future__ import annotations

import threading
from pathlib import Path

from agentcli.records import dataclass, field
from agentcli.regular_files import read_bytes

MAX_KEPT_BYTES = 2_000_000  # a larger file is listed as changed, not diffed


@dataclass(slots=True)
class Before:
    data: bytes | None  # None: the file did not exist
    too_large: bool = False


@dataclass(slots=True)
class WorkspaceChanges:
    root: Path
    files: dict[Path, Before] = field(default_factory=dict)  # in the order first written
    _lock: threading.Lock = field(default_factory=threading.Lock)  # tools write in threads

    def before_write(self, path: Path) -> None:
        """Called by a file tool just before it writes `path`: the first time, its current
        content is kept."""
        with self._lock:
            if path in self.files:
                return
            try:
                size = path.stat().st_size
                if size > MAX_KEPT_BYTES:
                    self.files[path] = Before(None, too_large=True)
                    return
                self.files[path] = Before(read_bytes(path))
            except FileNotFoundError:
                self.files[path] = Before(None)
            except OSError:
                self.files[path] = Before(None, too_large=True)  # unreadable: listed only

    def shown(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def diff(self) -> str:
        """A unified diff of every file written, from before the first write to now."""
        from agentcli.tools.file_access import unified_diff

        parts = []
        for path, before in list(self.files.items()):
            shown = self.shown(path)
            try:
                now: bytes | None = read_bytes(path)
            except FileNotFoundError:
                now = None
            except OSError as error:
                parts.append(f"{shown}: cannot read it now ({error.strerror})\n")
                continue
            if before.too_large:
                parts.append(f"{shown}: changed (too large or unreadable to diff)\n")
                continue
            if now == before.data:
                continue
            old = (before.data or b"").decode("utf-8", "replace")
            new = (now or b"").decode("utf-8", "replace")
            text = unified_diff(old, new, shown, max_lines=2_000)
            if before.data is None:
                text = text.replace(f"--- a/{shown}", "--- /dev/null", 1)
            if now is None:
                text = text.replace(f"+++ b/{shown}", "+++ /dev/null", 1)
            parts.append(text)
        return "".join(parts)


@dataclass(slots=True)
class GitChanges:
    diff: str  # `git diff` of the tracked files, the session's own files left out
    untracked: list[str]  # new files git does not track (nor ignore)


async def git_changes(root: Path, exclude: list[str], env: dict[str, str]) -> GitChanges | None:
    """What git sees changed in the workspace beyond `exclude`; None when git is missing,
    fails or is stuck. The caller checks first that the workspace is in a repository
    whose configuration runs no program (agentcli.policy.git_config)."""
    pathspec = [".", *(f":(exclude){path}" for path in exclude)]
    diff = await _git(
        root,
        env,
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--relative",
        "--",
        *pathspec,
    )
    others = await _git(root, env, "ls-files", "--others", "--exclude-standard", "--", *pathspec)
    if diff is None or others is None:
        return None
    return GitChanges(diff, others.splitlines())


async def _git(root: Path, env: dict[str, str], *args: str) -> str | None:
    import asyncio

    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            "--no-optional-locks",
            *args,
            cwd=str(root),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError:
        return None
    try:
        out, _ = await asyncio.wait_for(process.communicate(), timeout=10)
    except TimeoutError:
        process.kill()
        await process.wait()
        return None
    return out.decode("utf-8", "replace") if process.returncode == 0 else None
