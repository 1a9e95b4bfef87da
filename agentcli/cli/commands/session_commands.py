"""`agentcli sessions list | show | export | rm`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
from agentcli.sessions.store import unreadable


def _load(reference: str) -> Session:
    session = Session.load(find_session(reference))
    for warning in session.warnings:
        sys.stderr.write(f"agentcli: warning: {one_line(warning)}\n")
    return session


def _store_session(store: str, reference: str) -> tuple[Session, list]:
    from agentcli.sessions.stored import find_stored, open_store

    session, rows = find_stored(open_store(store, "--store"), reference)
    for warning in session.warnings:
        sys.stderr.write(f"agentcli: warning: {one_line(warning)}\n")
    return session, rows


def list_sessions(
    as_json: bool,
    *,
    limit: int | None = None,
    query: str | None = None,
    show_all: bool = False,
    store: str | None = None,
) -> int:
    """The sessions, latest first: those with a message (all with `show_all`), whose first
    prompt holds `query` (any case), at most `limit` of them; the store's with `store`."""
    if limit is not None and limit < 1:
        raise UsageError(f"-n must be at least 1, not {limit}")
    warnings: list[str] = []
    if store is not None:
        from agentcli.sessions.stored import open_store, stored_summaries

        found = stored_summaries(open_store(store, "--store"), warnings)
    else:
        found = all_summaries(warnings)
    summaries = [s for s in found if show_all or s.turns > 0]
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


def show(reference: str, store: str | None = None) -> int:
    session = _load(reference) if store is None else _store_session(store, reference)[0]
    # the model's and the tools' words, as they were recorded: shown, not obeyed
    sys.stdout.write(visible(transcript_markdown(session)) + "\n")
    return 0


def export(reference: str, fmt: str, store: str | None = None) -> int:
    if fmt not in ("json", "markdown"):
        raise UsageError(f"--format must be json or markdown, not {fmt!r}")
    rows = None
    if store is None:
        session = _load(reference)
    else:
        session, rows = _store_session(store, reference)
    text = export_json(session, rows) if fmt == "json" else visible(transcript_markdown(session))
    sys.stdout.write(text + "\n")
    return 0


def copy(references: list[str], to: str) -> int:
    """`sessions copy [ID…] --to URL`: session files (all, or those named) into a store.
    Again, it adds only what the files gained. Exit 1: a session the store holds otherwise
    (left as it is there; the others are copied)."""
    from agentcli.sessions.session import session_files
    from agentcli.sessions.store import sessions_dir
    from agentcli.sessions.stored import StoreConflict, copy_file, open_store

    store = open_store(to, "--to")
    store.migrate()
    if references:
        paths = [find_session(reference) for reference in references]
    else:
        paths = [path for _, path in session_files(sessions_dir())]
    skipped: list[str] = []
    copied = added = conflicts = 0
    for path in paths:
        try:
            _, new = copy_file(store, path, skipped)
        except StoreConflict:
            conflicts += 1
            sys.stderr.write(
                f"agentcli: warning: session {one_line(path.stem)} is in {store.name} with "
                "other records; left as it is there\n"
            )
            continue
        copied, added = copied + 1, added + new
    for line in skipped:
        sys.stderr.write(f"agentcli: warning: {one_line(line)} (not copied)\n")
    sys.stdout.write(f"copied {copied} sessions to {store.name}: {added} new records\n")
    return 1 if conflicts else 0


def remove(reference: str) -> int:
    path = find_session(reference)
    try:
        _remove_file(path)
    except OSError as error:  # a directory in its place, a read-only folder
        raise unreadable(path, error) from None
    remove_images(path)
    sys.stdout.write(f"removed session {one_line(path.stem)}\n")
    return 0


def _remove_file(path: Path) -> None:
    """Only a session file is removed: what stands in its place is left, and said (as
    `list` and `show` say it), whatever a link to it points at."""
    import errno
    import stat

    from agentcli.regular_files import NotRegular, kind_of

    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegular(errno.EINVAL, f"it is {kind_of(mode)}, not a regular file")
    path.unlink()


def rewind(reference: str, to: int, *, files: bool, chat: bool, force: bool) -> int:
    """`sessions rewind ID --to N`: the files and the conversation back to before turn N.
    Exit 0: done; 1: a conflict (nothing written) or a file that could not be restored;
    2: a bad turn number or options."""
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
