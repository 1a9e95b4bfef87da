"""`/init`: shows an AGENTS.md skeleton drawn from the workspace and writes it once the
user says yes — asked every time, and never replacing an existing AGENTS.md unless the
question said so."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from agentcli.output.visible import visible

if TYPE_CHECKING:
    from agentcli.ui.host import ReplHost

NAME = "AGENTS.md"


async def run_init(repl: ReplHost) -> None:
    from agentcli.context.agents_file import skeleton
    from agentcli.tools.base import ToolFailure
    from agentcli.tools.fs_write import write_at

    agent = repl.agent
    root = agent.workspace.root
    target = root / NAME
    text = await asyncio.to_thread(skeleton, root)
    style = repl.renderer.style
    for line in text.rstrip("\n").splitlines():
        repl.say(style.dim("│ ") + visible(line))
    question = f"write {NAME}? [y/N] "
    if os.path.lexists(target):
        repl.say(f"{NAME} exists already: yes replaces it with the above")
        question = f"replace {NAME}? [y/N] "
    if not await ask_yes(question):
        repl.say(f"{NAME} not written")
        return
    try:
        await asyncio.to_thread(agent.context.before_write, target)  # for /diff
        await asyncio.to_thread(write_at, target, root, NAME, text.encode("utf-8"))
    except (ToolFailure, OSError) as error:
        repl.say(f"error: cannot write {NAME}: {error}")
        return
    lines = text.count("\n")
    repl.say(f"wrote {NAME} ({lines} lines); it is read from the next conversation (/clear)")


async def ask_yes(question: str) -> bool:
    from prompt_toolkit import PromptSession

    try:
        answer = await PromptSession[str]().prompt_async(question)
    except (KeyboardInterrupt, EOFError):
        return False
    return answer.strip().lower() in ("y", "yes")
