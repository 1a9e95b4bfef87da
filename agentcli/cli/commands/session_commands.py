"""`agentcli sessions list | show | export | rm`."""

from __future__ import annotations

import sys

from agentcli.errors import UsageError
from agentcli.output.visible import one_line, visible
from agentcli.sessions.images import remove_images
from agentcli.sessions.listing import (
    all_summaries,
    export_json,
    summaries_json,
    summaries_table,
    transcript_markdown,
)
from agentcli.sessions.session import Session, find_session


def _load(reference: str) -> Session:
    session = Session.load(find_session(reference))
    for warning in session.warnings:
        sys.stderr.write(f"agentcli: warning: {one_line(warning)}\n")
    return session


def list_sessions(
    as_json: bool, *, limit: int | None = None, query: str | None = None, show_all: bool = False
) -> int:
    """The sessions, latest first: those with a message (all with `show_all`), whose first
    prompt holds `query` (any case), at most `limit` of them."""
    if limit is not None and limit < 1:
        raise UsageError(f"-n must be at least 1, not {limit}")
    warnings: list[str] = []
    summaries = [s for s in all_summaries(warnings) if show_all or s.turns > 0]
    for warning in warnings:  # damaged lines, unreadable files: the rest is listed
        sys.stderr.write(f"agentcli: warning: {one_line(warning)}\n")
    if query:
        summaries = [s for s in summaries if query.casefold() in s.first_prompt.casefold()]
    summaries = summaries[:limit] if limit is not None else summaries
    if as_json:
        sys.stdout.write(summaries_json(summaries) + "\n")
    elif summaries:
        sys.stdout.write(summaries_table(summaries))
    else:
        which = f" matching {one_line(repr(query))}" if query else ""
        hint = "" if show_all else " (--all shows the empty ones too)"
        sys.stdout.write(f"no sessions{which}{hint}\n")
    return 0


def show(reference: str) -> int:
    # the model's and the tools' words, as they were recorded: shown, not obeyed
    sys.stdout.write(visible(transcript_markdown(_load(reference))) + "\n")
    return 0


def export(reference: str, fmt: str) -> int:
    if fmt not in ("json", "markdown"):
        raise UsageError(f"--format must be json or markdown, not {fmt!r}")
    session = _load(reference)
    text = export_json(session) if fmt == "json" else visible(transcript_markdown(session))
    sys.stdout.write(text + "\n")
    return 0


def remove(reference: str) -> int:
    path = find_session(reference)
    path.unlink()
    remove_images(path)
    sys.stdout.write(f"removed session {one_line(path.stem)}\n")
    return 0


def rewind(reference: str, to: int, *, files: bool, chat: bool, force: bool) -> int:
    """`sessions rewind ID --to N`: the files and the conversation back to before turn N.
    Exit 0: done; 1: a conflict (nothing written) or a file that could not be restored;
    2: a bad turn number or options."""
    from pathlib import Path

    from agentcli.config.resolve import load_config
    from agentcli.workspace.checkpoints import checkpoints_for
    from agentcli.workspace.rewind import outcome_lines, rewind_turn

    if files and chat:
        raise UsageError("give --files or --chat, not both (neither rewinds both)")
    path = find_session(reference)
    session = Session.open(path)
    try:
        for warning in session.warnings:
            sys.stderr.write(f"agentcli: warning: {one_line(warning)}\n")
        workspace = Path(session.header.get("workspace") or "")
        if (files or not chat) and not workspace.is_dir():
            raise UsageError(
                f"the workspace of session {session.id} ({workspace}) is not there; "
                "--chat rewinds the conversation alone"
            )
        store = checkpoints_for(load_config(workspace), session.id, workspace)
        outcome, chat_done = rewind_turn(
            session, store, to, files=files or not chat, chat=chat or not files, force=force
        )
    finally:
        session.close()
    for line in outcome_lines(outcome, chat_done, to):  # they name files: one line each
        sys.stdout.write(one_line(line) + "\n")
    return 0 if outcome.clean or (force and not outcome.failed) else 1
