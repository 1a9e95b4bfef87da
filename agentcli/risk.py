"""The words tools and the policy share: a call's risk and its reason, what its rules are
matched against, the approval request, and the decision. A neutral module, so that tools
and policy each import it and never each other at import time."""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, Any, Literal

from agentcli.records import dataclass, field

if TYPE_CHECKING:
    from agentcli.policy.shell_parse import SimpleCommand

SubjectKind = Literal["command", "path", "text", "none"]
DecisionKind = Literal["allow", "deny"]
DecidedBy = Literal["auto", "rule", "session", "user", "flag"]


class Risk(IntEnum):
    LOW = 1  # runs without asking
    MEDIUM = 2  # asks once per session
    HIGH = 3  # asks every time

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Outside:
    """A path a tool may not reach on its own (agentcli.sandbox.boundary): why, and how a
    person lets it."""

    place: str  # the resolved path
    why: str  # one line
    never: bool = False  # agentcli's own files: no approval lets a tool write them


@dataclass(frozen=True, slots=True)
class Assessment:
    """A tool's risk for one set of arguments, with a short human reason."""

    risk: Risk
    reason: str
    # Outside the workspace or a sensitive target: only a rule that names the place
    # specifically may allow it (never a bare tool rule or a broad glob).
    protected: bool = False
    # Beyond the boundary: no rule or flag allows it; only a person, for this one call.
    outside: Outside | None = None


@dataclass(frozen=True, slots=True)
class Subjects:
    """What a call's rules are matched against."""

    kind: SubjectKind = "none"
    commands: tuple[SimpleCommand, ...] = ()
    values: tuple[str, ...] = ()  # absolute paths, or texts
    complete: bool = True  # commands: the command line was fully understood
    cwd: str | None = None  # commands: where they would run
    # commands: why it may run a program no rule can see (then every deny and ask rule for
    # the tool matches it: agentcli.policy.shell_reach)
    hidden: str | None = None
    # commands: what else it runs that a deny or ask rule must see (the programs a
    # repository's configuration names for a git command)
    also: tuple[SimpleCommand, ...] = ()


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    tool: str
    arguments: dict[str, Any]
    assessment: Assessment
    preview: str | None = None
    subjects: Subjects = field(default_factory=Subjects)
    sandbox: str | None = None  # the sandbox profile it would run in (tools that run commands)
    description: list[str] | None = None  # the tool's own lines for the prompt (describe)
    network: bool = False  # the tool itself reaches the network (fetch_url, web_search)
    # Why a step before the decision (a hook) wants a person asked: asked as an `ask`
    # rule is, and never remembered, since the step would ask again.
    ask_reasons: tuple[str, ...] = ()
    # Only a person at a terminal answers those reasons: --yes does not (a whole-file
    # overwrite the small local model chose, agentcli.agent.overwrite_step).
    person_only: bool = False
    asker: str | None = None  # a subagent's name, when one of its calls asks


@dataclass(frozen=True, slots=True)
class Decision:
    decision: DecisionKind
    by: DecidedBy
    reason: str
    rule: str | None = None

    @property
    def allowed(self) -> bool:
        return self.decision == "allow"
