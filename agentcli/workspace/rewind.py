"""Rewinding the workspace to how it was before a turn, from its checkpoints
(agentcli.workspace.checkpoints).

From the turn's first change on, every change recorded (by any turn since, and by earlier
rewinds) is undone: each file gets back the state before its first change, if it is still
as agentcli's last change left it. A file changed since by someone else (its hash differs)
is a conflict: nothing is written then unless the caller forces it, and a forced overwrite
keeps what it replaces, so a rewind can itself be rewound. Paths are reached from the root
through descriptors without following a link; `.git` and `.agentcli` are never written."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentcli.records import dataclass, field
from agentcli.workspace.checkpoints import Checkpoints, State, Turn, protected, same
from agentcli.workspace.safe_open import UnsafePath, open_directory, open_parent


@dataclass(slots=True)
class FilePlan:
    path: str
    target: State  # before the turn's first change
    expected: State  # what agentcli's last change left
    current: State  # what is there now


@dataclass(slots=True)
class Outcome:
    """What a rewind did: each list holds (path, words)."""

    restored: list[tuple[str, str]] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.conflicts and not self.failed


def changes_from(log: list[dict[str, Any]], turn_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The change records from the first one of any of `turn_ids` on, in order."""
    wanted = set(turn_ids)
    for index, record in enumerate(log):
        if record.get("turn") in wanted:
            return [r for r in log[index:] if r.get("t") == "change"]
    return []


def files_of(log: list[dict[str, Any]], turn_id: str) -> list[str]:
    """The files a turn changed, each once, in order."""
    paths = (r["path"] for r in log if r.get("t") == "change" and r.get("turn") == turn_id)
    return list(dict.fromkeys(paths))


def plan(store: Checkpoints, turn_ids: Sequence[str]) -> list[FilePlan]:
    """What rewinding to before the first of `turn_ids` would do, file by file."""
    targets: dict[str, State] = {}
    expected: dict[str, State] = {}
    for record in changes_from(store.log(), turn_ids):
        targets.setdefault(record["path"], record["before"])
        expected[record["path"]] = record["after"]
    return [
        FilePlan(path, targets[path], expected[path], store.state(path, keep=False))
        for path in targets
    ]


def describe(state: State) -> str:
    kind = state.get("kind")
    if kind == "none":
        return "missing"
    if kind == "dir":
        return "a directory"
    if kind == "other":
        return str(state.get("what", "something else"))
    return f"{state.get('size', 0):,} bytes"


def _cannot(store: Checkpoints, item: FilePlan) -> str | None:
    """Why `item` cannot be put back whatever is there now, or None."""
    target = item.target
    if protected(item.path):
        return "a protected path (.git, .agentcli): a rewind never writes it"
    if target.get("kind") == "other":
        return f"it was {describe(target)}, which checkpoints do not keep"
    if target.get("kind") == "file" and store.content(target) is None:
        if not target.get("kept") and target.get("size", 0) > store.max_file_bytes:
            return (
                f"it was {target['size']:,} bytes, over checkpoints.max_file_bytes "
                f"({store.max_file_bytes:,}): only its size and time were recorded"
            )
        return "its content was dropped from the checkpoints (checkpoints.max_bytes)"
    return None


def rewind(
    store: Checkpoints, turn_ids: Sequence[str], number: int, *, force: bool = False
) -> Outcome:
    """Puts the files back as they were before turn `number` (the first of `turn_ids`).
    Any conflict, without `force`: nothing is written, the conflicts are said."""
    outcome = Outcome()
    wanted = set(turn_ids)
    for record in store.log():  # what the record of a turn does not hold: said, not guessed
        if record.get("t") == "gap" and record.get("turn") in wanted:
            outcome.failed.append(("(the turn's other files)", str(record.get("why"))))
    todo = []
    for item in plan(store, turn_ids):
        if same(item.current, item.target):
            continue  # already as it was
        why = _cannot(store, item)
        if why is not None:
            outcome.failed.append((item.path, why))
            continue
        if not same(item.current, item.expected):
            outcome.conflicts.append(
                (
                    item.path,
                    f"changed since agentcli's last change (now {describe(item.current)}, "
                    f"was {describe(item.expected)})",
                )
            )
        todo.append(item)
    if outcome.conflicts and not force:
        return outcome
    rewind_id = f"rewind-{os.urandom(4).hex()}"
    done: list[tuple[str, State, State]] = []
    for item in todo:
        before = store.state(item.path)  # kept: the rewind itself can be undone
        try:
            words = _put_back(store, item)
        except (OSError, _Refused) as error:
            outcome.failed.append((item.path, _why(error)))
            continue
        outcome.restored.append((item.path, words))
        done.append((item.path, before, store.state(item.path, keep=False)))
    store.record(Turn(rewind_id, 0, f"rewind to before turn {number}"), "rewind", done)
    if force:
        outcome.conflicts = []  # overwritten, as asked, and said as restored
    return outcome


class _Refused(Exception):
    pass


def _why(error: BaseException) -> str:
    if isinstance(error, UnsafePath):
        return f"{error.strerror}; not written"
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return str(error)


def _put_back(store: Checkpoints, item: FilePlan) -> str:
    root, path = store.root, store.root / item.path
    kind = item.target["kind"]
    if kind == "file":
        from agentcli.tools.base import ToolFailure
        from agentcli.tools.fs_write import write_at

        data = store.content(item.target)
        assert data is not None  # checked by _cannot
        try:
            existed = write_at(path, root, item.path, data)
        except ToolFailure as failure:
            raise _Refused(str(failure)) from None
        return "restored" if existed else "restored (it had been deleted)"
    if kind == "dir":
        with contextlib.suppress(FileExistsError):
            os.close(open_directory(path, root, create=True))
        return "directory made again"
    return _remove(root, path, item)


def _remove(root: Path, path: Path, item: FilePlan) -> str:
    """The turn made it: it goes (a file, or an empty directory), never through a link."""
    dir_fd = open_parent(path, root)
    try:
        info = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            try:
                os.rmdir(path.name, dir_fd=dir_fd)
            except OSError as error:
                raise _Refused("a directory that is not empty now; left as it is") from error
            return "directory removed (the turn made it)"
        if not stat.S_ISREG(info.st_mode):
            raise _Refused("not a regular file now; left as it is")
        os.unlink(path.name, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
    return "removed (the turn made it)"


# --- a session's turns, and rewinding one


@dataclass(slots=True)
class TurnRow:
    """A turn as the picker lists it: its number, its user message, what it changed."""

    number: int
    id: str
    index: int  # its user message's place in the conversation
    prompt: str
    time: str = ""  # when it first changed a file ("" when it changed none)
    files: list[str] = field(default_factory=list)


def turns_of(messages: Sequence[Any], log: list[dict[str, Any]]) -> list[TurnRow]:
    """The conversation's turns, the first first, with the files each changed."""
    times = {r["turn"]: str(r.get("time", "")) for r in log if r.get("t") == "turn"}
    rows = []
    for index, message in enumerate(messages):
        if message.role == "user":
            row = TurnRow(len(rows) + 1, message.id, index, " ".join(message.content.split()))
            row.time, row.files = times.get(message.id, ""), files_of(log, message.id)
            rows.append(row)
    return rows


def rewind_turn(
    session: Any,
    store: Checkpoints,
    number: int,
    *,
    files: bool = True,
    chat: bool = True,
    force: bool = False,
) -> tuple[Outcome, bool]:
    """Turn `number` of `session` (agentcli.sessions.session.Session) undone: its files
    and the later turns' (`files`), the conversation back to before its prompt (`chat`).
    A conflict without `force` changes nothing at all. Returns the files' outcome and
    whether the conversation was taken back."""
    rows = turns_of(session.conversation.messages, store.log())
    if not 1 <= number <= len(rows):
        from agentcli.errors import UsageError

        raise UsageError(
            f"turn {number} is not in this session, which has {len(rows)} turn"
            f"{'' if len(rows) == 1 else 's'}; give a number from 1 to {len(rows)}"
            if rows
            else "this session has no turns to rewind"
        )
    outcome = Outcome()
    if files:
        later = [row.id for row in rows[number - 1 :]]
        outcome = rewind(store, later, number, force=force)
        if outcome.conflicts:
            return outcome, False
    if chat:
        session.rewind_to(rows[number - 1].index)
    return outcome, chat


def outcome_lines(outcome: Outcome, chat: bool, number: int) -> list[str]:
    """What a rewind did, for a person: a line a file, then one line in all."""
    from agentcli.output.visible import visible

    lines = [f"{words}: {visible(path)}" for path, words in outcome.restored]
    lines += [f"conflict: {visible(path)} {why}" for path, why in outcome.conflicts]
    lines += [f"not restored: {visible(path)}: {why}" for path, why in outcome.failed]
    if outcome.conflicts:
        lines.append(
            "nothing was restored: the files above changed since agentcli's last change "
            "(--force, or the overwrite choice, replaces them; what is there now is kept)"
        )
        return lines
    count = len(outcome.restored)
    said = [f"{count} file{'' if count == 1 else 's'} restored"] if count else []
    if not count and not outcome.failed:
        said.append("no file to restore")
    if chat:
        said.append(f"the conversation is back to before turn {number}")
    lines.append("; ".join(said) + ".")
    return lines
