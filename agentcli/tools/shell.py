"""Shell and Python execution, in the foreground under a timeout or as background jobs.
Every process runs in its own process group with a clean environment and stdin from
/dev/null, and is stopped with all its descendants on timeout, cancel or exit."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.process.capture import OutputCapture
from agentcli.risk import Assessment, Risk, Subjects
from agentcli.text.words import plural
from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput

if TYPE_CHECKING:  # the process machinery is imported by the first command run
    from agentcli.process.run import CommandResult

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
PROGRESS_INTERVAL = 0.25

_SANDBOX_SCHEMA = {
    "sandbox": {
        "type": "string",
        "enum": ["read-only", "workspace-write", "network", "none"],
        "description": "Only when the default sandbox refused something the task needs: "
        "workspace-write to change files in the workspace, network to reach the network, "
        "none to run without a sandbox. Asking for more asks the user.",
    },
    "justification": {
        "type": "string",
        "description": "With sandbox: one sentence the user sees saying why it is needed.",
    },
}

_TIMEOUT_SCHEMA = {
    "type": "number",
    "exclusiveMinimum": 0,
    "maximum": MAX_TIMEOUT,
    "description": f"Seconds before the process tree is killed (default {DEFAULT_TIMEOUT}, "
    f"at most {MAX_TIMEOUT}).",
}


def shell_argv(command: str) -> list[str]:
    import shutil  # shutil and tempfile: here, not at import (`policy explain` needs neither)

    shell = shutil.which("bash") or "/bin/sh"
    return [shell, "-c", command]


def resolve_cwd(ctx: ToolContext, requested: str | None) -> str:
    if not requested:
        return str(ctx.workspace.root)
    target = ctx.workspace.resolve(requested)
    if not ctx.reach.holds(target.path, writing=False):
        raise ToolFailure(
            f"cwd {requested!r} is outside the workspace; commands run inside the workspace "
            "(or a directory added with --add-dir)"
        )
    if not target.path.is_dir():
        raise ToolFailure(f"cwd {requested!r} is not a directory")
    return str(target.path)


def output_capture(ctx: ToolContext, suffix: str) -> OutputCapture:
    """A capture for the call's output, spilled to a file in the session's outputs while
    they can be saved (a full or read-only data directory: in memory only, said once)."""
    saving = ctx.saving
    if ctx.output_dir is None:
        return OutputCapture(ctx.output_limit)
    if saving is not None and not saving.saves_outputs:
        return OutputCapture(ctx.output_limit, unsaved="the data directory cannot be written")
    path = ctx.output_dir / f"{ctx.call_id or 'call'}-{suffix}.log"
    failed = saving.output_failed if saving is not None else None
    return OutputCapture(ctx.output_limit, spill_path=path, on_spill_error=failed)


def _progress_reporter(ctx: ToolContext) -> Any:
    last = 0.0

    def report(capture: OutputCapture) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last < PROGRESS_INTERVAL:
            return
        last = now
        ctx.progress({"lines": capture.latest_lines(3), "bytes": capture.total})

    return report


# How a refusal by the sandbox shows in a command's output, and what to say about it.
_REFUSALS = (
    (
        (
            "Network is unreachable",
            "Could not resolve host",
            "Temporary failure in name resolution",
            "Name or service not known",
            "socket: Permission denied",
            "/dev/tcp/",
            "Connection refused",
        ),
        "the network is off in this profile",
    ),
    (
        ("Read-only file system", "Permission denied", "Operation not permitted"),
        "a file outside what this profile may write (or read) was refused",
    ),
)
_SEES = {
    "read-only": "it sees only the workspace and system files, writes only $TMPDIR, has no network",
    "workspace-write": "it sees only the workspace and system files, writes the workspace, "
    "has no network",
    "network": "it sees only the workspace and system files, writes the workspace",
}
_NEXT_STEP = {
    "read-only": "if the task needs to write in the workspace, call again with "
    "sandbox='workspace-write' and a justification; for the network, sandbox='network'",
    "workspace-write": "if the task needs the network, call again with sandbox='network' "
    "and a justification; a place outside the workspace needs the user to add it "
    "(--add-dir DIR, or /add-dir DIR in a chat), and what git follows in .git and "
    ".agentcli/ stay read-only",
    "network": "a place outside the workspace needs the user to add it (--add-dir DIR, or "
    "/add-dir DIR in a chat)",
}


def sandbox_notes(result: CommandResult, output: str) -> list[str]:
    """Plain words for what the sandbox did: the profile, a refusal it probably caused,
    protected paths it had to put back."""
    if result.profile == "none":
        return []
    notes = [f"sandbox: {result.profile} ({_SEES[result.profile]})"]
    if result.restored:
        shown = ", ".join(result.restored[:5])
        notes.append(f"the command changed protected paths ({shown}); agentcli put them back")
    if result.exit_code != 0 and not result.timed_out:
        for needles, what in _REFUSALS:
            if any(needle in output for needle in needles):
                step = _NEXT_STEP.get(result.profile, "")
                notes.append(f"note: this may be the sandbox: {what}; {step}".rstrip("; "))
                break
    return notes


def format_result(label: str, result: CommandResult, timeout: float) -> ToolOutput:
    output = result.capture.text()
    lines = [f"{label}", f"exit code {result.exit_code} · {result.duration:.2f}s"]
    if result.timed_out:
        lines.append(
            f"timed out after {timeout:g}s: the command and all its processes were killed; "
            "the output below is what it printed before the kill"
        )
    if result.leftovers_killed:
        lines.append(
            f"note: {result.leftovers_killed} process(es) the command left running were "
            "killed; start servers and watchers with background=true"
        )
    lines += sandbox_notes(result, output)
    lines.append("output:" if output else "output: (none)")
    content = "\n".join(lines) + ("\n" + output if output else "")
    count = output.count("\n") + (1 if output and not output.endswith("\n") else 0)
    status = "timed out" if result.timed_out else f"exit {result.exit_code}"
    summary = f"{status}, {plural(count, 'line')}"  # the renderer adds the one timing
    if result.profile != "none":
        summary += f" · sandbox {result.profile}"
    failed = result.timed_out or result.exit_code != 0
    kind = ("timeout" if result.timed_out else "failed") if failed else None
    structured = {
        "exitCode": result.exit_code,
        "timedOut": result.timed_out,
        "output": output,  # stdout and stderr as the command interleaved them
        "sandbox": result.profile,
    }
    return ToolOutput(
        content=content, error=failed, summary=summary, error_kind=kind, structured=structured
    )


def confine(ctx: ToolContext, argv: list[str], cwd: str, executables: list[str] | None = None):
    """The call's command as its sandbox profile runs it (None: it runs as it is)."""
    if not ctx.sandboxed or ctx.profile == "none":
        return None
    from agentcli.sandbox.profiles import Profile

    return ctx.sandbox.confine(
        argv, Profile(ctx.profile), cwd=cwd, env=ctx.child_env, executables=executables or []
    )


async def run_foreground(
    ctx: ToolContext,
    argv: list[str],
    label: str,
    cwd: str,
    timeout: float,
    executables: list[str] | None = None,
) -> ToolOutput:
    from agentcli.process.run import run_command

    capture = output_capture(ctx, "output")
    result = await run_command(
        argv,
        cwd=cwd,
        env=ctx.child_env,
        timeout=timeout,
        capture=capture,
        on_output=_progress_reporter(ctx),
        confined=confine(ctx, argv, cwd, executables),
        live=ctx.processes,
    )
    return format_result(label, result, timeout)


def requested_profile(args: dict[str, Any], ctx: ToolContext, base: Assessment) -> Assessment:
    """A call that asks for a larger sandbox than its risk earns is as risky as what it asks
    for, and the user sees why it asks (Codex's escalation)."""
    asked = args.get("sandbox")
    if not asked or not ctx.sandboxed:
        return base
    from agentcli.sandbox.profiles import EARNED, ESCALATION_RISK, Profile

    profile = Profile(asked)
    if profile.rank <= EARNED[base.risk].rank:
        return base
    risk = max(base.risk, ESCALATION_RISK[profile])
    why = str(args.get("justification") or "no reason given").strip()
    return Assessment(risk, f"{base.reason}; asks for the {asked} sandbox: {why}", base.protected)


class RunShell(Tool):
    name = "run_shell"
    runs_commands = True
    path_arguments = ("cwd",)
    risk_summary = "low for read-only commands; high otherwise and for background jobs"
    description = (
        "Run a shell command (bash) in the workspace and return its exit code and output "
        "(stdout and stderr combined, in order). stdin is empty: commands must not wait for "
        "input. Long output keeps its head and tail, and the full output is saved to a file "
        "you can read. Use background=true for servers and watchers, then job_output and "
        "job_kill."
    )
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line to run."},
            "timeout": _TIMEOUT_SCHEMA,
            "cwd": {"type": "string", "description": "Directory inside the workspace."},
            "background": {
                "type": "boolean",
                "description": "Start it as a background job and return its job_id at once.",
            },
            **_SANDBOX_SCHEMA,
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        from agentcli.policy.shell_risk import classify_shell

        if args.get("background"):
            base = Assessment(Risk.HIGH, "starts a background job that keeps running")
            return requested_profile(args, ctx, base)
        try:
            cwd = Path(resolve_cwd(ctx, args.get("cwd")))
        except ToolFailure as failure:
            return Assessment(Risk.HIGH, str(failure))
        # A low call runs in the read-only sandbox: the classifier may rate more forms low.
        base = classify_shell(
            args["command"],
            ctx.workspace,
            cwd,
            contained=ctx.sandboxed,
            processes_visible=lambda: not (ctx.sandboxed and ctx.sandbox.hides_processes),
        )
        return requested_profile(args, ctx, base)

    def rule_subjects(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        from agentcli.policy.command_reach import command_line_hidden, repository_reach
        from agentcli.policy.shell_parse import parse_command

        parsed = parse_command(args["command"])
        try:
            cwd: str | None = resolve_cwd(ctx, args.get("cwd"))
        except ToolFailure:
            cwd = None
        also, hooks = repository_reach(parsed, Path(cwd or ctx.workspace.root))
        return Subjects(
            "command",
            commands=tuple(parsed.commands),
            complete=parsed.plain,
            cwd=cwd,
            hidden=command_line_hidden(parsed) or hooks,
            also=also,
        )

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        command = args["command"]
        cwd = resolve_cwd(ctx, args.get("cwd"))
        if args.get("background"):
            if ctx.jobs is None:
                raise ToolFailure("background jobs are not available here")
            argv = shell_argv(command)
            job = await ctx.jobs.start(
                command, argv, cwd=cwd, env=ctx.child_env, confined=confine(ctx, argv, cwd)
            )
            return ToolOutput(
                content=(
                    f"started {job.id} (pid {job.tree.pid}): {command}\n"
                    f"Read its output with job_output(job_id={job.id!r}); stop it with "
                    f"job_kill. It is stopped when agentcli exits."
                ),
                summary=f"started {job.id}",
            )
        timeout = args.get("timeout", DEFAULT_TIMEOUT)
        return await run_foreground(ctx, shell_argv(command), f"$ {command}", cwd, timeout)


def find_python(ctx: ToolContext) -> str:
    if ctx.python:
        return ctx.python
    import shutil

    path = ctx.child_env.get("PATH", os.environ.get("PATH", ""))
    found = shutil.which("python3", path=path) or shutil.which("python", path=path)
    if not found:
        raise ToolFailure("no python3 or python on PATH; set the interpreter in configuration")
    return found


class RunPython(Tool):
    name = "run_python"
    runs_commands = True
    description = (
        "Run Python code with the python3 found on PATH (not agentcli's own environment), "
        "from a temporary file in the workspace directory; returns exit code and output."
    )
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "The Python source to run."},
            "timeout": _TIMEOUT_SCHEMA,
            **_SANDBOX_SCHEMA,
        },
        "required": ["code"],
        "additionalProperties": False,
    }

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return requested_profile(args, ctx, Assessment(Risk.HIGH, "runs Python code"))

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        python = find_python(ctx)
        timeout = args.get("timeout", DEFAULT_TIMEOUT)
        # In a sandbox, the script lives in the sandbox's own temp dir, which it can read.
        parent = ctx.sandbox.temp if ctx.sandboxed and ctx.profile != "none" else None
        import tempfile

        with tempfile.TemporaryDirectory(prefix="agentcli-python-", dir=parent) as scratch:
            script = Path(scratch) / "snippet.py"
            script.write_text(args["code"], encoding="utf-8")
            cwd = str(ctx.workspace.root)
            return await run_foreground(
                ctx, [python, str(script)], "python snippet.py", cwd, timeout, [python]
            )


class JobOutput(Tool):
    name = "job_output"
    read_only = True
    risk_summary = "low"
    description = (
        "Read what a background job printed since the last call, and whether it is still "
        "running or how it exited. wait: seconds to wait for new output or exit."
    )
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "job_id": {"type": "string"},
            "wait": {"type": "number", "minimum": 0, "maximum": MAX_TIMEOUT},
        },
        "required": ["job_id"],
        "additionalProperties": False,
    }

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.LOW, "reads a background job's output")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        job = _find_job(ctx, args["job_id"])
        if args.get("wait"):
            await ctx.jobs.wait_for_change(job, args["wait"])
        output = job.take_unread()
        body = output if output else "(no new output)"
        status = job.status()
        return ToolOutput(content=f"{job.id} ({job.command}): {status}\n{body}", summary=status)


class JobKill(Tool):
    name = "job_kill"
    risk_summary = "low"
    description = "Stop a background job and every process it started."
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {"job_id": {"type": "string"}},
        "required": ["job_id"],
        "additionalProperties": False,
    }

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.LOW, "stops a job agentcli started")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        job = _find_job(ctx, args["job_id"])
        await ctx.jobs.kill(job)
        output = job.take_unread()
        status = job.status()
        tail = f"\nlast output:\n{output}" if output else ""
        return ToolOutput(content=f"{job.id} ({job.command}): {status}{tail}", summary=status)


def _find_job(ctx: ToolContext, job_id: str) -> Any:
    job = ctx.jobs.get(job_id) if ctx.jobs is not None else None
    if job is None:
        known = ", ".join(ctx.jobs.jobs) if ctx.jobs is not None and ctx.jobs.jobs else "none"
        raise ToolFailure(f"no job {job_id!r}; jobs of this session: {known}")
    return job
