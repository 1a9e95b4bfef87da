"""`/diff`: what this session changed in the workspace — the files its tools wrote, as a
unified diff against their content before the session's first change; then, in a git
repository, what else git sees changed (by shell commands, or by you), said as such."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.output.visible import one_line, visible

if TYPE_CHECKING:
    from agentcli.ui.host import ReplHost


async def show_diff(repl: ReplHost) -> None:
    from agentcli.policy.git_config import find_repository, repository_problem
    from agentcli.workspace.changes import git_changes

    agent = repl.agent
    changes = agent.context.changes
    own = changes.diff() if changes is not None else ""
    if own:
        repl.say("changed by this session's file tools:")
        _show(repl, own)
    else:
        repl.say("this session's file tools changed nothing")
    root = agent.workspace.root
    if find_repository(root) is None:
        repl.say("(not a git repository: changes made by commands are not shown)")
        return
    problem = repository_problem(root, "diff", contains=agent.workspace.contains)
    if problem is not None:
        repl.say(f"(git diff not run: {problem})")
        return
    written = [changes.shown(path) for path in changes.files] if changes is not None else []
    seen = await git_changes(root, written, agent.context.child_env)
    if seen is None:
        repl.say("(git diff failed: changes made by commands are not shown)")
    elif seen.diff or seen.untracked:
        repl.say("also changed, as git diff sees it (commands, or you):")
        _show(repl, seen.diff)
        for path in seen.untracked:
            repl.say(f"  new, untracked: {one_line(path)}")
    else:
        repl.say("git diff: nothing else changed")


def _show(repl: ReplHost, diff: str) -> None:
    style = repl.renderer.style
    for line in visible(diff).splitlines():
        if line.startswith(("+++", "---", "@@")):
            repl.say(style.dim(line))
        elif line.startswith("+"):
            repl.say(style.green(line))
        elif line.startswith("-"):
            repl.say(style.red(line))
        else:
            repl.say(line)
