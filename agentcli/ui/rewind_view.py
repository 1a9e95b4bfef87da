"""`/rewind`: a picker of the conversation's turns (prompt, when, files changed), then what
to take back — the files, the conversation, or both — and what was restored and what could
not be. A file changed since by someone else is a conflict: it is shown, and overwritten
only when the person chooses that (what it held is kept, so that can be rewound too)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from agentcli.output.visible import one_line, visible
from agentcli.text.words import plural

if TYPE_CHECKING:
    from agentcli.ui.host import ReplHost
    from agentcli.workspace.rewind import TurnRow

BOTH, CHAT, FILES = "files and conversation", "the conversation only", "the files only"


def _when(stamp: str) -> str:
    from agentcli.sessions.listing import age

    try:
        then = time.mktime(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return ""
    return age(time.time() - then)


def _row(row: TurnRow) -> tuple[str, str]:
    files = plural(len(row.files), "file") + " changed" if row.files else "no files changed"
    tail = " · ".join(part for part in (_when(row.time), files) if part)
    return f"{row.number}. {visible(row.prompt) or '(no prompt)'}", tail


async def rewind_command(repl: ReplHost) -> None:
    from agentcli.ui.picker import pick
    from agentcli.workspace.checkpoints import checkpoints_for
    from agentcli.workspace.rewind import outcome_lines, rewind_turn, turns_of

    session = repl.agent.session
    store = checkpoints_for(repl.settings.config, session.id, repl.agent.workspace.root)
    rows = turns_of(session.conversation.messages, store.log())
    if not rows:
        repl.say("no turns to rewind yet")
        return
    latest_first = list(reversed(rows))
    index = await pick(
        "Rewind to before which turn?", [_row(r) for r in latest_first], action="chooses"
    )
    if index is None:
        repl.say("(cancelled)")
        return
    row = latest_first[index]
    changed = {path for later in rows[row.number - 1 :] for path in later.files}
    choices = [BOTH, CHAT, FILES] if changed else [CHAT]
    what = await pick(
        f"Turn {row.number}: restore what? ({plural(len(changed), 'file')} changed since)",
        [(choice, "") for choice in choices],
        action="restores",
    )
    if what is None:
        repl.say("(cancelled)")
        return
    files, chat = choices[what] in (BOTH, FILES), choices[what] in (BOTH, CHAT)
    outcome, chat_done = rewind_turn(session, store, row.number, files=files, chat=chat)
    if outcome.conflicts:
        for line in outcome_lines(outcome, False, row.number)[:-1]:
            repl.say(f"  {one_line(line)}")
        overwrite = await pick(
            f"{plural(len(outcome.conflicts), 'file')} changed since agentcli's last change",
            [
                ("leave everything as it is", ""),
                ("overwrite them too", "what they hold is kept"),
            ],
            action="chooses",
        )
        if not overwrite:
            repl.say("nothing was restored")
            return
        outcome, chat_done = rewind_turn(
            session, store, row.number, files=files, chat=chat, force=True
        )
    for line in outcome_lines(outcome, chat_done, row.number):  # they name files
        repl.say(f"  {one_line(line)}")
