"""Shell and Python execution with real processes: trees killed, nothing waits on stdin,
memory bounded, head and tail kept, secrets withheld, background jobs controlled."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import psutil
import pytest

from agentcli import records
from agentcli.process.capture import OutputCapture
from agentcli.process.env import child_environment
from agentcli.process.jobs import JobManager
from agentcli.process.run import LiveTrees
from agentcli.tools.base import ToolContext, ToolFailure
from agentcli.tools.shell import JobKill, JobOutput, RunPython, RunShell
from agentcli.workspace.root import Workspace


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "ws"
    root.mkdir()
    live = LiveTrees()  # this run's process trees
    return ToolContext(
        workspace=Workspace(root),
        output_dir=tmp_path / "outputs",
        child_env=child_environment(),
        jobs=JobManager(tmp_path / "outputs", limit=30_000, live=live),
        processes=live,
        call_id="call_1",
    )


def shell(ctx: ToolContext, command: str, **args):
    return asyncio.run(RunShell().execute({"command": command, **args}, ctx))


def pids_in(text: str) -> list[int]:
    return [int(p) for p in re.findall(r"^PID (\d+)$", text, re.MULTILINE)]


def assert_all_dead(pids: list[int]) -> None:
    deadline = time.monotonic() + 2
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [
            p for p in alive if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"
        ]
        time.sleep(0.05)
    assert not alive, f"survivors: {alive}"


def test_exit_code_and_combined_output_in_order(ctx):
    out = shell(ctx, "echo one; echo two >&2; echo three; exit 7")
    assert out.error
    assert "exit code 7" in out.content
    assert out.content.endswith("output:\none\ntwo\nthree\n")
    assert out.summary.startswith("exit 7, 3 lines")
    ok = shell(ctx, "true")
    assert not ok.error and "exit code 0" in ok.content and "output: (none)" in ok.content


def test_timeout_kills_the_whole_tree_including_a_setsid_grandchild(ctx):
    command = (
        "sleep 999 & echo PID $!; setsid sleep 999 & echo PID $!; "
        "bash -c 'sleep 999 & echo PID $!; wait' & sleep 999"
    )
    started = time.monotonic()
    out = shell(ctx, command, timeout=1)
    assert time.monotonic() - started < 4.5
    assert "exit code 124" in out.content and "timed out after 1s" in out.content
    pids = pids_in(out.content)
    assert len(pids) == 3
    assert_all_dead(pids)


def test_orphans_holding_the_pipe_do_not_block_and_are_killed(ctx):
    started = time.monotonic()
    out = shell(ctx, "(sleep 100 & echo PID $!); echo done")
    assert time.monotonic() - started < 50  # blocked on the orphan's pipe would be 100 s
    assert "done" in out.content and "exit code 0" in out.content
    assert "process(es) the command left running were killed" in out.content
    assert_all_dead(pids_in(out.content))


def test_double_forked_daemon_that_left_the_tree_is_found_by_its_marker(ctx):
    out = shell(
        ctx,
        "setsid bash -c 'sleep 300 & echo PID $!' > /dev/null; sleep 0.2; "
        "pgrep -n -x sleep | sed 's/^/PID /'",
    )
    pids = pids_in(out.content)
    assert pids
    assert_all_dead(pids)


@pytest.mark.parametrize(
    "command",
    ["cat", "read x; echo got:$x", "python3 -c 'import sys; print(len(sys.stdin.read()))'"],
)
def test_commands_reading_stdin_return_at_once(ctx, command):
    started = time.monotonic()
    out = shell(ctx, command, timeout=120)
    assert time.monotonic() - started < 60  # waiting for input would end at the timeout
    assert not out.content.startswith("timed out")


def test_huge_output_keeps_head_and_tail_and_the_full_file(ctx):
    out = shell(ctx, "seq 1 300000")
    text = out.content
    assert "output:\n1\n2\n3\n" in text
    assert text.endswith("299999\n300000\n")
    assert "bytes omitted" in text
    assert len(text) < 31_000
    saved = re.search(r"is in (\S+\.log)", text)
    assert saved, text[:500]
    assert Path(saved.group(1)).read_text().splitlines()[-1] == "300000"


def test_a_flood_under_timeout_keeps_memory_bounded(ctx):
    me = psutil.Process()
    before = me.memory_info().rss
    out = shell(ctx, "yes", timeout=2)
    growth = me.memory_info().rss - before
    assert "timed out after 2s" in out.content
    assert "output:\ny\ny\ny\n" in out.content and out.content.endswith("y\ny\n")
    assert growth < 50 * 1024 * 1024, growth


def test_capture_memory_is_constant():
    capture = OutputCapture(limit=1000)
    for _ in range(10_000):
        capture.feed(b"x" * 1000 + b"\n")
    assert len(capture.head) == 500
    assert sum(len(c) for c in capture._tail) <= 500 + 1001
    assert capture.total == 10_010_000


def test_non_utf8_output_is_decoded_lossily(ctx):
    out = shell(ctx, r"printf 'caf\xe9 \xff ok\n'")
    assert "caf\ufffd \ufffd ok" in out.content


def test_cwd_must_be_inside_the_workspace(ctx, tmp_path):
    (ctx.workspace.root / "sub").mkdir()
    assert shell(ctx, "pwd", cwd="sub").content.rstrip().endswith("/ws/sub")
    for bad in ("..", str(tmp_path), "/"):
        with pytest.raises(ToolFailure, match="outside the workspace"):
            shell(ctx, "pwd", cwd=bad)
    with pytest.raises(ToolFailure, match="not a directory"):
        shell(ctx, "pwd", cwd="missing")


def test_children_see_no_secrets(monkeypatch, tmp_path):
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "AWS_SECRET_ACCESS_KEY",
        "MY_CREDENTIALS",
        "HARMLESS_SETTING",
    ):
        monkeypatch.setenv(name, "s3cr3t-" + name)
    monkeypatch.setenv("EXTRA_TOKEN", "wanted")
    env = child_environment(["EXTRA_TOKEN", "OPENAI_API_KEY"])
    root = tmp_path / "ws"
    root.mkdir()
    context = ToolContext(workspace=Workspace(root), child_env=env)
    out = shell(context, "env")
    assert "s3cr3t" not in out.content
    assert "EXTRA_TOKEN=wanted" in out.content  # named explicitly by the user
    for expected in (
        "HOME=",
        "PATH=",
        "PYTHONIOENCODING=utf-8",
        "PAGER=cat",
        "GIT_PAGER=cat",
        "GIT_EDITOR=true",
    ):
        assert expected in out.content


def test_run_python_uses_a_file_so_tracebacks_have_line_numbers(ctx):
    out = asyncio.run(RunPython().execute({"code": "x = 1\n\n1/0\n"}, ctx))
    assert out.error and "exit code 1" in out.content
    assert 'snippet.py", line 3' in out.content and "ZeroDivisionError" in out.content


def test_run_python_uses_the_python_on_path_not_agentclis_own(ctx, tmp_path):
    import os
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(os.path.realpath(sys.executable))
    ctx.child_env["PATH"] = f"{bin_dir}:/usr/bin:/bin"
    code = "import sys; print(sys.executable); print(sys.prefix)"
    out = asyncio.run(RunPython().execute({"code": code}, ctx))
    executable, prefix = out.content.splitlines()[-2:]
    assert executable == str(bin_dir / "python3")
    assert prefix != sys.prefix  # not the environment agentcli runs in


def test_background_job_starts_streams_exits_and_is_killed(ctx):
    async def scenario():
        started = time.monotonic()
        out = await RunShell().execute(
            {"command": "echo first; sleep 0.3; echo second; sleep 300", "background": True}, ctx
        )
        assert time.monotonic() - started < 150  # waiting for the command would be 300 s
        job_id = re.search(r"started (job_\d+)", out.content).group(1)
        first = await JobOutput().execute({"job_id": job_id, "wait": 2}, ctx)
        assert "running for" in first.content
        assert first.content.splitlines()[1:] == ["first"]
        second = await JobOutput().execute({"job_id": job_id, "wait": 2}, ctx)
        assert second.content.splitlines()[1:] == ["second"]  # only what is new
        pid = ctx.jobs.get(job_id).tree.pid
        killed = await JobKill().execute({"job_id": job_id}, ctx)
        assert "was killed" in killed.content
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"
        done = await RunShell().execute({"command": "echo bye; exit 3", "background": True}, ctx)
        other = re.search(r"started (job_\d+)", done.content).group(1)
        final = await JobOutput().execute({"job_id": other, "wait": 2}, ctx)
        for _ in range(20):
            if "exited" in final.content:
                break
            final = await JobOutput().execute({"job_id": other, "wait": 0.1}, ctx)
        assert "exited with code 3" in final.content
        with pytest.raises(ToolFailure, match="no job 'job_9'"):
            await JobOutput().execute({"job_id": "job_9"}, ctx)

    asyncio.run(scenario())


def test_stop_all_ends_every_live_tree(ctx):
    async def scenario():
        await RunShell().execute({"command": "sleep 300", "background": True}, ctx)
        pids = [tree.pid for tree in ctx.processes.trees]
        assert pids
        await ctx.processes.stop_all()
        return pids

    assert_all_dead(asyncio.run(scenario()))


def test_each_run_stops_only_its_own_trees(ctx, tmp_path):
    theirs_live = LiveTrees()  # another run's (agentcli serve runs several at once)
    jobs = JobManager(tmp_path / "other", limit=30_000, live=theirs_live)
    other = records.replace(ctx, processes=theirs_live, jobs=jobs)

    async def scenario():
        await RunShell().execute({"command": "sleep 300", "background": True}, ctx)
        await RunShell().execute({"command": "sleep 300", "background": True}, other)
        [mine], [theirs] = ctx.processes.trees, other.processes.trees
        await ctx.processes.stop_all()
        alive = theirs.popen.poll() is None
        await other.processes.stop_all()
        return mine.pid, theirs.pid, alive

    mine, theirs, alive = asyncio.run(scenario())
    assert alive, "stopping one run's processes stopped another run's"
    assert_all_dead([mine, theirs])


def test_cancelling_a_running_command_kills_its_tree(ctx):
    async def scenario():
        task = asyncio.create_task(
            RunShell().execute({"command": "sleep 300 & echo PID $!; wait"}, ctx)
        )
        await asyncio.sleep(0.5)
        trees = ctx.processes.trees
        pids = [m.pid for tree in trees for m in tree.members()] + [t.pid for t in trees]
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pids

    pids = asyncio.run(scenario())
    assert pids
    assert_all_dead(pids)


def test_a_kept_tree_whose_keeper_was_killed_first_leaves_no_orphan(tmp_path: Path) -> None:
    """A sandbox keeper owns its tree and kills it before it exits; SIGKILLed first (the
    end of stop's grace on a loaded machine), its processes go to init. stop() then finds
    them by the tree's marker, as it does for trees without a keeper."""
    import os
    import signal

    from agentcli.process.tree import PipeReader, start

    token = f"{os.getpid() % 1000}.{time.monotonic_ns() % 1000}7"
    command = f"setsid sleep 3{token} & echo started; exec sleep 60"

    async def go() -> list[int]:
        tree = start(["/bin/sh", "-c", command], cwd=str(tmp_path), env=dict(os.environ), kept=True)
        started = asyncio.Event()
        reader = PipeReader(tree.popen.stdout, lambda chunk: started.set())  # type: ignore[arg-type]
        await asyncio.wait_for(started.wait(), 30)
        os.kill(tree.pid, signal.SIGKILL)  # the "keeper" dies before its tree
        await tree.wait()
        await tree.stop(grace=0.1)
        reader.close()
        return [
            p.pid
            for p in psutil.process_iter(["cmdline"])
            if f"3{token}" in " ".join(p.info["cmdline"] or []) and p.status() != "zombie"
        ]

    assert asyncio.run(go()) == []
