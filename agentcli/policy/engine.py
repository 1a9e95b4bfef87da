"""Decides every tool call: rules (deny → ask → allow), this session's remembered choices,
then the call's risk (low runs; medium asks until the person allows the tool for the
session, `s`; high asks every time; `y` is always this call alone); `--yes` / `--deny`
answer what would ask; with nobody to ask, deny and never wait.

Prompts are shown one at a time; a call waiting for one blocks only itself, and a choice
made for the session applies at once to the calls still waiting."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentcli.errors import AgentCliError, ExitCode
from agentcli.policy.rules import (
    Rule,
    RuleSet,
    command_allowed_by,
    command_rule_pattern,
    covers,
    matches_any,
)
from agentcli.records import dataclass, field
from agentcli.risk import ApprovalRequest, DecidedBy, Decision, DecisionKind, Risk
from agentcli.workspace.root import Workspace

if TYPE_CHECKING:
    import asyncio

# "once" is this call alone for every tool and risk: a key pressed out of habit never
# grants more than the call on the screen; the wider grants have their own keys.
ChoiceKind = Literal["once", "session", "project", "deny", "deny_session"]

NO_TERMINAL_HINT = (
    "no terminal to ask for approval; rerun with --yes, or allow it with --allow RULE"
)


class TurnCancelled(AgentCliError):
    """Ctrl-C at an approval prompt: the call is denied and the turn is cancelled."""

    exit_code = ExitCode.INTERRUPTED
    code = "cancelled"


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the policy would do without asking anyone: allow, deny, or ask."""

    decision: Literal["allow", "deny", "ask"]
    by: DecidedBy
    reasons: list[str]
    rule: str | None = None
    # Only a person may answer it: no flag (--yes) and no rule allows it.
    person_only: bool = False


@dataclass(frozen=True, slots=True)
class Prompt:
    """What the approval prompt shows and offers."""

    request: ApprovalRequest
    session_rules: list[str]  # what "always this session" / "this project" would save
    reasons: list[str]
    # Only a person may answer it (no flag or rule would): an approver that cannot tell a
    # person from a program (`mcp serve`'s client) refuses it.
    person_only: bool = False


@dataclass(frozen=True, slots=True)
class UserChoice:
    kind: ChoiceKind
    reason: str = ""  # after a denial: why, for the model


def offered(prompt: Prompt) -> list[ChoiceKind]:
    """The choices the prompt offers: the same for every tool, so each key means one thing.
    (Medium risk's "ask once per session" is the `session` choice, offered first after
    this call alone.)"""
    if not prompt.session_rules:  # no rule can describe this call safely: decided once
        return ["once", "deny"]
    return ["once", "session", "project", "deny", "deny_session"]


def remembered(kind: ChoiceKind, risk: Risk, rules: list[str]) -> list[str]:
    """The rules a choice keeps for the rest of the session (allowed, or refused for
    deny_session). The prompt's labels are made from this, so they say what it does."""
    if kind in ("deny", "once"):
        return []
    return rules


@dataclass(frozen=True, slots=True)
class NobodyToAsk:
    """An approver's answer when nobody can be asked this time (`mcp serve`'s client
    offers no elicitation): the call is refused as with no terminal, with `hint` saying
    how to allow it."""

    hint: str


Approver = Callable[[Prompt], Awaitable["UserChoice | NobodyToAsk"]]
ProjectRuleWriter = Callable[[list[str]], str]  # saves allow rules; returns a note


def suggested_rules(request: ApprovalRequest, workspace: Workspace) -> list[str]:
    """The rules a longer-lived choice saves, by structure, not by string. None for a
    command that is not plain: no rule could describe it safely, so it is asked each time."""
    subjects = request.subjects
    if subjects.kind == "command" and not subjects.complete:
        return []
    if request.assessment.outside is not None:
        return []  # a person approves one path beyond the boundary, for one call
    if request.ask_reasons:
        return []  # the step that asked would ask again: nothing to remember
    if request.assessment.risk is Risk.MEDIUM:
        return [request.tool]
    if subjects.kind == "command":
        from agentcli.policy.shell_risk import simple_command_problem

        patterns = []
        cwd = Path(subjects.cwd) if subjects.cwd else workspace.root
        for command in subjects.commands:
            if simple_command_problem(command, workspace, cwd) is not None:
                patterns.append(f"{request.tool}({command_rule_pattern(command)})")
        return list(dict.fromkeys(patterns)) or [request.tool]
    if subjects.kind == "path" and subjects.values:
        parents = {str(Path(v).parent) for v in subjects.values}
        return [f"{request.tool}({p}/*)" for p in sorted(parents)]
    if subjects.kind == "text" and subjects.values:
        return [f"{request.tool}({v})" for v in subjects.values]
    return [request.tool]


@dataclass(slots=True)
class Policy:
    rules: RuleSet = field(default_factory=RuleSet)
    yes: bool = False
    deny: bool = False
    approver: Approver | None = None
    workspace: Workspace = field(default_factory=lambda: Workspace("."))
    save_project_rules: ProjectRuleWriter | None = None
    session_allow: list[Rule] = field(default_factory=list)
    session_deny: list[Rule] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # said to the user after a choice
    # The CI contract: --yes approves inside the sandbox. The network takes --allow-network
    # (or sandbox.network); leaving the sandbox takes --sandbox none, never --yes.
    allow_network: bool = False
    sandbox: Any = None  # agentcli.sandbox.Sandbox: are commands confined? (found when asked)
    # Made by the first prompt: `policy explain` never prompts, and so never imports asyncio.
    _prompting: asyncio.Lock | None = None
    # The last request whose protected paths were checked, and what was found: a request
    # is explained more than once on its way to a decision, and the check walks the tree.
    _gap_checked: tuple[ApprovalRequest, str | None] | None = None

    # --- without asking

    def verdict(self, request: ApprovalRequest) -> Verdict:
        tool, subjects, ws = request.tool, request.subjects, self.workspace.root
        risk_reason = request.assessment.reason
        unseen = _unseen(request)
        for rule in [*self.rules.deny, *self.session_deny]:
            if matches_any(rule, tool, subjects, ws) or _runs_what_it_denies(rule, tool):
                by: DecidedBy = "session" if rule.source == "session" else "rule"
                reasons = [f"the rule {rule.text} denies it", *unseen, risk_reason]
                return Verdict("deny", by, reasons, rule.text)
        outside = request.assessment.outside
        if outside is not None:
            # Beyond the boundary: no rule allows it and no flag grants it; a person may
            # approve this one call (agentcli's own files: not even that).
            return Verdict("deny" if outside.never else "ask", "auto", [outside.why])
        gap = self._protection_gap(request)
        if gap is not None:
            # Fail closed: what it could change could not be kept, so no rule or flag
            # runs it; a person may.
            return Verdict("ask", "auto", [gap, risk_reason], person_only=True)
        if request.ask_reasons:  # a step before the decision asked for a person
            reasons = [*request.ask_reasons, risk_reason]
            return Verdict("ask", "rule", reasons, person_only=request.person_only)
        for rule in self.rules.ask:
            if matches_any(rule, tool, subjects, ws):
                reasons = [f"the rule {rule.text} asks", *unseen, risk_reason]
                return Verdict("ask", "rule", reasons, rule.text)
        if self._widens_sandbox(request):
            # Asking to widen the sandbox is decided by a person or a flag, never by a rule
            # written for the command itself.
            return Verdict("ask", "auto", [risk_reason])
        allowed = self._allowed_by(request, [*self.rules.allow, *self.session_allow])
        if allowed is not None:
            by = "session" if allowed.source == "session" else "rule"
            return Verdict(
                "allow", by, [f"allowed by the rule {allowed.text}", risk_reason], allowed.text
            )
        if request.assessment.risk is Risk.LOW:
            return Verdict("allow", "auto", [risk_reason])
        return Verdict("ask", "auto", [*unseen, risk_reason])

    def _allowed_by(self, request: ApprovalRequest, rules: list[Rule]) -> Rule | None:
        tool, subjects = request.tool, request.subjects
        candidates = [r for r in rules if r.names(tool)]
        if not candidates:
            return None
        if subjects.kind != "command":
            protected = request.assessment.protected
            root = self.workspace.root
            return next((r for r in candidates if covers(r, tool, subjects, root, protected)), None)
        if not subjects.complete or not subjects.commands:
            return None  # a command we cannot fully account for is never allowed by a rule
        if _fed_commands(subjects.commands):
            return None  # what `printf '!cmd' | ed f` runs is in the input, not the rule
        from agentcli.policy.shell_risk import simple_command_problem  # (when a command is run)

        cwd = Path(subjects.cwd) if subjects.cwd else self.workspace.root
        used: Rule | None = None
        for command in subjects.commands:
            rule = next(
                (
                    r
                    for r in candidates
                    if r.pattern is None or command_allowed_by(r.pattern, command)
                ),
                None,
            )
            if rule is not None:
                used = used or rule
            elif simple_command_problem(command, self.workspace, cwd) is not None:
                return None  # every part must be allowed, or read-only by itself
        for command in subjects.also:  # what the repository's configuration makes git run
            allowed = any(
                r.pattern is None or command_allowed_by(r.pattern, command) for r in candidates
            )
            if not allowed and simple_command_problem(command, self.workspace, cwd) is not None:
                return None  # `git *` allows git, not the program a cloned repository names
        return used

    def explain(self, request: ApprovalRequest) -> Verdict:
        """What an interactive session with these rules and flags would decide."""
        verdict = self.verdict(request)
        if verdict.decision != "ask":
            return verdict
        if self.deny:
            return Verdict("deny", "flag", [*verdict.reasons, "--deny refuses it"], verdict.rule)
        if self.yes and verdict.person_only:
            if request.person_only and self.approver is not None:
                return verdict  # a person is here to answer; --yes does not answer for them
            return Verdict("deny", "flag", [*verdict.reasons, "--yes does not run it"])
        if self.yes:
            refusal = self._beyond_yes(request)
            if refusal is not None:
                return Verdict("deny", "flag", [*verdict.reasons, refusal], verdict.rule)
            return Verdict("allow", "flag", [*verdict.reasons, "--yes allows it"], verdict.rule)
        return verdict

    @property
    def _sandbox_active(self) -> bool:
        return self.sandbox is not None and self.sandbox.active

    @property
    def _boundary_enforced(self) -> bool:
        """The sandbox is on (it may be enforced in code alone where no OS mechanism is)."""
        return self.sandbox is not None and self.sandbox.settings.enabled

    def _protection_gap(self, request: ApprovalRequest) -> str | None:
        """Why a command that may write the workspace could change what git or agentcli
        runs for good here (agentcli.sandbox.guard could not keep all of it)."""
        if request.sandbox not in ("workspace-write", "network") or self.sandbox is None:
            return None
        if self._gap_checked is not None and self._gap_checked[0] is request:
            return self._gap_checked[1]
        gap = self.sandbox.protection_gap(request.sandbox)
        said = None
        if gap is not None:
            said = (
                f"{gap.what}: a command that may write the workspace could change what git or "
                f"agentcli runs for good, so only a person at a terminal may approve it "
                f"(or {gap.remedy})"
            )
        self._gap_checked = (request, said)
        return said

    def _widens_sandbox(self, request: ApprovalRequest) -> bool:
        return (
            self._sandbox_active
            and request.sandbox in ("network", "none")
            and bool(request.arguments.get("sandbox"))
        )

    def _beyond_yes(self, request: ApprovalRequest) -> str | None:
        """What --yes may not grant: a path beyond the boundary, a sandbox it never leaves,
        a network it was not given."""
        if request.assessment.outside is not None:
            return "--yes never reaches beyond the workspace and the places you added"
        if request.network and self._boundary_enforced and not self.allow_network:
            return "--yes does not grant the network (add --allow-network)"
        if request.sandbox is not None and self._boundary_enforced and not self._sandbox_active:
            return (
                "--yes runs commands only inside a sandbox, and none can run here (agentcli "
                "doctor says why); --sandbox none runs them unconfined"
            )
        if not self._widens_sandbox(request):
            return None  # what the user's own configuration gives a tool is theirs to give
        if request.sandbox == "none":
            return "--yes never leaves the sandbox (run with --sandbox none to allow that)"
        if request.sandbox == "network" and not self.allow_network:
            return "--yes does not grant the network (add --allow-network)"
        return None

    # --- deciding, asking if someone can answer

    async def decide(self, request: ApprovalRequest) -> Decision:
        verdict = self.explain(request)
        if verdict.decision != "ask":
            return _decision(verdict)
        if self.approver is None:
            return _unasked(request, verdict, NO_TERMINAL_HINT)
        if self._prompting is None:
            import asyncio

            self._prompting = asyncio.Lock()
        async with self._prompting:  # one prompt at a time
            verdict = self.explain(request)  # a choice made meanwhile may cover this call
            if verdict.decision != "ask":
                return _decision(verdict)
            rules = suggested_rules(request, self.workspace)
            person = verdict.person_only or request.assessment.outside is not None
            choice = await self.approver(Prompt(request, rules, verdict.reasons, person))
            if isinstance(choice, NobodyToAsk):
                return _unasked(request, verdict, choice.hint)
            return self._remember(request, choice, rules, verdict)

    def _remember(
        self, request: ApprovalRequest, choice: UserChoice, rules: list[str], verdict: Verdict
    ) -> Decision:
        from agentcli.policy.rules import parse_rule

        reason = "; ".join(verdict.reasons)
        kept = remembered(choice.kind, request.assessment.risk, rules)
        if choice.kind in ("deny", "deny_session"):
            self.session_deny.extend(parse_rule(r, "session") for r in kept)
            said = f"; the user said: {choice.reason}" if choice.reason else ""
            return Decision("deny", "user", f"the user denied it{said}", None)
        self.session_allow.extend(parse_rule(r, "session") for r in kept)
        saved = ", ".join(kept) or None
        if choice.kind == "project" and rules and self.save_project_rules is not None:
            self.notes.append(self.save_project_rules(rules))
        return Decision("allow", "user", reason, saved)


# Tools whose argument is a program text: what it runs no rule can see into, so a deny rule
# on shell commands applies to them too (the deny rule wins where it cannot see).
CODE_TOOLS = frozenset({"run_python"})


def _fed_commands(commands: tuple[Any, ...]) -> bool:
    """Whether a command after the first may read commands from its input (a pipe from
    the one before): an interpreter, an editor, a shell."""
    from agentcli.policy.runners import runs_its_words
    from agentcli.policy.wrappers import SHELLS

    return any(
        runs_its_words(c.argv) or c.program.rsplit("/", 1)[-1] in SHELLS for c in commands[1:]
    )


def _unseen(request: ApprovalRequest) -> list[str]:
    """Why a command counts as running every program, for the reasons a rule gives."""
    subjects = request.subjects
    if subjects.kind != "command":
        return []
    notes = [f"it may run any program: {subjects.hidden}"] if subjects.hidden else []
    if subjects.also:
        named = "; ".join(list(dict.fromkeys(str(c) for c in subjects.also))[:3])
        notes.append(f"its repository's configuration makes git run: {named}")
    return notes


def _runs_what_it_denies(rule: Rule, tool: str) -> bool:
    return tool in CODE_TOOLS and rule.names("run_shell")


def _unasked(request: ApprovalRequest, verdict: Verdict, hint: str) -> Decision:
    """Refused: it would ask, and nobody can answer. Beyond the boundary, or where only a
    person may answer, no flag would help, so the hint is left out."""
    person = verdict.person_only or request.assessment.outside is not None
    reasons = [*verdict.reasons, *([] if person else [hint])]
    return Decision("deny", "auto", "; ".join(reasons), verdict.rule)


def _decision(verdict: Verdict) -> Decision:
    kind: DecisionKind = "allow" if verdict.decision == "allow" else "deny"
    return Decision(kind, verdict.by, "; ".join(verdict.reasons), verdict.rule)
