"""A step's read-only calls as one line of the REPL's transcript: `✓ Searched for 1
pattern, read 1 file (ctrl+o to expand · /expand 2)`. Read-only is the policy's word: a
call it classed low risk and let run without asking (agentcli.risk). A call that failed,
asked, or hands work on (a subagent's task, a question to the user) is shown as ever."""

from __future__ import annotations

from typing import Any

from agentcli.records import dataclass, field
from agentcli.text.words import plural

NOT_FOLDED = frozenset({"task", "ask_user"})  # their lines are what the person follows
# tool → (verb, noun): "searched for 2 patterns"
VERBS = {
    "search_files": ("searched for", "pattern"),
    "search_content": ("searched for", "pattern"),
    "read_file": ("read", "file"),
    "list_directory": ("listed", "directory"),
    "run_shell": ("ran", "read-only command"),
    "run_python": ("ran", "read-only script"),
}


def read_only(approval: dict[str, Any] | None) -> bool:
    """The policy ran it without asking because it only reads (low risk, decided alone)."""
    if not approval or approval.get("tool") in NOT_FOLDED:
        return False
    low = approval.get("risk") == "low" and approval.get("decision") == "allow"
    return low and approval.get("by") == "auto"


@dataclass(slots=True)
class _Call:
    name: str
    lines: list[str]  # its call line, its result line and its preview, as they would show


@dataclass(slots=True)
class StepReads:
    """The read-only calls of the step under way, not drawn yet."""

    held: dict[str, str] = field(default_factory=dict)  # call id → its call line
    done: list[_Call] = field(default_factory=list)

    def hold(self, call_id: str, line: str | None) -> None:
        self.held[call_id] = line or ""

    def holds(self, call_id: str) -> bool:
        return call_id in self.held

    def drop(self, call_id: str) -> str | None:
        """A held call that is shown after all (it failed): its call line."""
        return self.held.pop(call_id, None) or None

    def finished(self, call_id: str, name: str, lines: list[str]) -> None:
        line = self.held.pop(call_id, "")
        self.done.append(_Call(name, [x for x in (line, *lines) if x]))

    def take(self) -> tuple[str, list[str]] | None:
        """The summary of the calls done so far and their lines; None when there are none."""
        if not self.done:
            return None
        done, self.done = self.done, []
        return summary([call.name for call in done]), [x for c in done for x in c.lines]


def summary(names: list[str]) -> str:
    """`Searched for 1 pattern, read 2 files`: each kind once, in the order first seen."""
    counts: dict[tuple[str, str], int] = {}
    others: list[str] = []
    for name in names:
        if name in VERBS:
            counts[VERBS[name]] = counts.get(VERBS[name], 0) + 1
        elif name not in others:
            others.append(name)
    said = [f"{verb} {plural(count, noun)}" for (verb, noun), count in counts.items()]
    if others:
        said.append("used " + ", ".join(others))
    text = ", ".join(said)
    return text[:1].upper() + text[1:]
