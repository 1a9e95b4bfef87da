"""Starting a command and stopping its whole process tree.

POSIX: each command starts in a new session (its own process group) with stdin from
/dev/null and a per-command marker variable in its environment. Stopping sends SIGTERM to
the group and to every descendant found before the kill (a grandchild that called setsid
has left the group but is still a descendant, or still carries the marker after its parent
died), waits a short grace, then SIGKILLs whatever is left.

Windows (not supported yet) would slot in behind the same three operations — start,
stop_tree, leftovers — by assigning each child to a Job Object created with
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE (CreateJobObject, AssignProcessToJobObject right after a
CREATE_SUSPENDED start, then ResumeThread): TerminateJobObject ends every process in the
tree at once, and closing the handle when agentcli dies ends them too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

    import psutil  # imported when a tree is walked: starting agentcli does not need it

MARKER_VARIABLE = "AGENTCLI_PROCESS_MARK"
GRACE_SECONDS = 2.0
READ_CHUNK = 64 * 1024


class ProcessTree:
    """One started command and everything it spawns."""

    def __init__(self, popen: subprocess.Popen[bytes], marker: str, kept: bool = False) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.marker = marker
        # Kept: the root is the sandbox's keeper, a subreaper that owns every descendant, or
        # bubblewrap, whose PID namespace holds them: the descendants of the root are the
        # whole tree (no search by marker needed), and none outlives the root.
        self.kept = kept
        self._exited: asyncio.Future[int] | None = None

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    async def wait(self) -> int:
        """Waits for the root process to exit — not for its pipes to close, which orphans
        may hold open (asyncio's own Process.wait waits for both)."""
        import asyncio

        if self._exited is None:
            self._exited = _exit_future(self.popen)
        return await asyncio.shield(self._exited)

    def members(self) -> list[psutil.Process]:
        """Every live process of this tree: descendants of the root, and processes that
        carry the marker (orphans re-parented away from the tree)."""
        if self.kept and self.popen.poll() is not None:
            return []  # the root that held them all has ended, and they with it
        import psutil

        found: dict[int, psutil.Process] = {}
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(self.pid)
            for child in root.children(recursive=True):
                found[child.pid] = child
        if self.kept:
            return list(found.values())
        return [*found.values(), *self.marked(set(found))]

    def marked(self, known: frozenset[int] | set[int] = frozenset()) -> list[psutil.Process]:
        """The live processes that carry this tree's marker (other than `known` ones and
        the root): orphans re-parented away from it."""
        import psutil

        found: dict[int, psutil.Process] = {}
        uid = os.getuid()
        for proc in psutil.process_iter(["pid", "uids"]):
            if proc.pid in known or proc.pid == self.pid or proc.pid == os.getpid():
                continue
            try:
                if proc.info["uids"] is None or proc.info["uids"].real != uid:
                    continue
                if proc.environ().get(MARKER_VARIABLE) == self.marker:
                    found[proc.pid] = proc
            except psutil.Error:
                continue
        return list(found.values())

    def _signal_all(self, members: list[psutil.Process], sig: int) -> None:
        import psutil

        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)
        for member in members:
            with contextlib.suppress(psutil.Error):
                member.send_signal(sig)

    async def stop(self, grace: float = GRACE_SECONDS) -> None:
        """SIGTERM to the whole tree, a grace period, then SIGKILL to what is left."""
        import asyncio

        members = self.members()  # found before the kill: the tree breaks up as it dies
        self._signal_all(members, signal.SIGTERM)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while loop.time() < deadline:
            if self.popen.poll() is not None and not any(_alive(m) for m in members):
                break
            await asyncio.sleep(0.05)
        self._signal_all([m for m in members + self.members() if _alive(m)], signal.SIGKILL)
        await self.wait()
        if self.kept:
            # A keeper killed before it killed its tree (SIGKILLed at the grace's end on a
            # loaded machine) leaves its processes to init: they still carry the marker.
            self._signal_all([m for m in self.marked() if _alive(m)], signal.SIGKILL)

    def kill_leftovers(self) -> int:
        """After the command returned: kill what it left running. Returns how many."""
        members = [m for m in self.members() if _alive(m)]
        self._signal_all(members, signal.SIGKILL)
        return len(members)


def _alive(proc: psutil.Process) -> bool:
    import psutil

    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _exit_future(popen: subprocess.Popen[bytes]) -> asyncio.Future[int]:
    """A future for the root's exit: a pidfd where the kernel has them, polling elsewhere."""
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[int] = loop.create_future()
    try:
        pidfd = os.pidfd_open(popen.pid)
    except (AttributeError, OSError):
        pidfd = None

    def reap() -> None:
        if pidfd is not None:
            loop.remove_reader(pidfd)
            os.close(pidfd)
        if not future.done():
            future.set_result(popen.wait())

    if pidfd is not None:
        loop.add_reader(pidfd, reap)
    else:

        async def poll() -> None:
            while popen.poll() is None:
                await asyncio.sleep(0.01)
            reap()

        loop.create_task(poll())  # noqa: RUF006 - the future holds the result
    return future


class PipeReader:
    """Reads a pipe without blocking the event loop, chunk by chunk, until end of file."""

    def __init__(self, pipe: IO[bytes], on_chunk: Callable[[bytes], None]) -> None:
        import asyncio

        self.pipe = pipe
        self.fd = fd = pipe.fileno()
        self.on_chunk = on_chunk
        self.loop = asyncio.get_running_loop()
        self.done: asyncio.Future[None] = self.loop.create_future()
        os.set_blocking(fd, False)
        self.loop.add_reader(fd, self._readable)

    def _readable(self) -> None:
        try:
            chunk = os.read(self.fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            self.on_chunk(chunk)
        else:
            self.close()

    def close(self) -> None:
        """Stops reading (at end of file, or when orphans hold the pipe open too long)."""
        if self.done.done():
            return
        self.loop.remove_reader(self.fd)
        self.pipe.close()
        self.done.set_result(None)


def start(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    pass_fds: Sequence[int] = (),
    kept: bool = False,
) -> ProcessTree:
    """Starts `argv` in a new session, stdin from /dev/null, stdout and stderr combined
    into one pipe (so their order is kept). Read it with PipeReader(tree.popen.stdout).
    `pass_fds` are handed to the child and closed here."""
    marker = os.urandom(8).hex()
    try:
        popen = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env={**env, MARKER_VARIABLE: marker},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            pass_fds=tuple(pass_fds),
        )
    finally:
        for fd in pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
    return ProcessTree(popen, marker, kept)
