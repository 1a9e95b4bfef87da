"""Background jobs: commands that keep running (servers, watchers) while the agent works.
Each job's output is captured in bounded buffers; `read` returns what arrived since the
last read. Every job is stopped when agentcli exits (runner) or on `kill`."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentcli.process.capture import OutputCapture
from agentcli.process.run import LiveTrees, start_tree
from agentcli.process.tree import PipeReader, ProcessTree
from agentcli.records import dataclass, field


@dataclass(slots=True)
class Job:
    id: str
    command: str
    tree: ProcessTree
    started: float
    log: OutputCapture  # everything, spilled to the job's log file
    unread: OutputCapture  # since the last read
    limit: int
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    reader: PipeReader | None = None
    watcher: asyncio.Task[None] | None = None
    exit_code: int | None = None
    killed: bool = False
    confined: Any = None  # its sandbox, finished (protected paths checked) when it ends

    def feed(self, chunk: bytes) -> None:
        self.log.feed(chunk)
        self.unread.feed(chunk)
        self.changed.set()

    def take_unread(self) -> str:
        text = self.unread.text()
        self.unread = OutputCapture(self.limit)
        return text

    def status(self) -> str:
        took = time.monotonic() - self.started
        if self.exit_code is None:
            return f"running for {took:.0f}s"
        how = "was killed" if self.killed else f"exited with code {self.exit_code}"
        return f"{how} after {took:.1f}s"


class JobManager:
    def __init__(
        self, log_dir: Path | None, limit: int, live: LiveTrees | None = None, saving: Any = None
    ) -> None:
        """`saving`: the session, which says whether logs can still be saved and hears
        once when one cannot (agentcli.tools.base.ToolContext.saving)."""
        self.log_dir = log_dir
        self.limit = limit
        self.saving = saving
        self.live = live if live is not None else LiveTrees()  # the run's: its end stops them
        self.jobs: dict[str, Job] = {}

    async def start(
        self,
        command: str,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        confined: Any = None,  # agentcli.sandbox.confine.Confined: run it in its sandbox
    ) -> Job:
        job_id = f"job_{len(self.jobs) + 1}"
        try:
            tree = start_tree(argv, cwd=cwd, env=env, confined=confined, live=self.live)
        except BaseException:
            if confined is not None:
                confined.finish()  # it never ran: its protected paths' watch ends now
            raise
        saving = self.saving
        saved = self.log_dir is not None and (saving is None or saving.saves_outputs)
        log_path = self.log_dir / f"{job_id}-{tree.pid}.log" if saved and self.log_dir else None
        failed = saving.output_failed if saving is not None else None
        job = Job(
            id=job_id,
            command=command,
            tree=tree,
            started=time.monotonic(),
            log=OutputCapture(self.limit, spill_path=log_path, on_spill_error=failed),
            unread=OutputCapture(self.limit),
            limit=self.limit,
            confined=confined,
        )
        assert tree.popen.stdout is not None
        job.reader = PipeReader(tree.popen.stdout, job.feed)
        self.jobs[job_id] = job
        job.watcher = asyncio.get_running_loop().create_task(self._watch(job))
        return job

    async def _watch(self, job: Job) -> None:
        job.exit_code = await job.tree.wait()
        # Orphans may keep the pipe open; read what is there, then stop reading.
        if job.reader is not None:
            try:
                await asyncio.wait_for(asyncio.shield(job.reader.done), 0.3)
            except TimeoutError:
                job.reader.close()
        job.tree.kill_leftovers()
        if job.confined is not None:
            job.confined.finish()
        self.live.trees.discard(job.tree)
        job.log.close()
        job.changed.set()

    def get(self, job_id: str) -> Job | None:
        return self.jobs.get(job_id)

    async def wait_for_change(self, job: Job, seconds: float) -> None:
        if job.exit_code is not None or job.unread.total:
            return
        job.changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(job.changed.wait(), seconds)

    async def kill(self, job: Job) -> None:
        if job.exit_code is None:
            job.killed = True
            await job.tree.stop()
            if job.watcher is not None:
                await job.watcher  # the exit code and the last output are recorded
