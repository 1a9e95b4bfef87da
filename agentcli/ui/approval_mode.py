"""The REPL's approval mode, visible and changeable: ask (the default), yes (auto-approve,
what `--yes` does) and deny (what `--deny` does). The bottom toolbar shows it, `/approvals`
shows or sets it, Shift+Tab cycles it. Auto-approve grants exactly what `--yes` grants
(the policy decides): never a command outside the sandbox, the network only with
--allow-network."""

from __future__ import annotations

from typing import Any, Literal

from agentcli.policy.engine import Policy

Mode = Literal["ask", "yes", "deny"]
MODES: tuple[Mode, ...] = ("ask", "yes", "deny")
LABELS: dict[Mode, str] = {"ask": "ask", "yes": "yes (auto-approve)", "deny": "deny"}
MEANINGS: dict[Mode, str] = {
    "ask": "calls that are not low risk ask you first",
    "yes": "calls that would ask run without asking, inside the sandbox (leaving it takes "
    "--sandbox none; the network, --allow-network)",
    "deny": "calls that would ask are refused; low-risk calls still run",
}
USAGE = "/approvals [ask|yes|deny] (Shift+Tab cycles them)"


def mode_of(policy: Policy) -> Mode:
    return "deny" if policy.deny else "yes" if policy.yes else "ask"


def set_mode(policy: Policy, mode: Mode) -> None:
    policy.yes, policy.deny = mode == "yes", mode == "deny"


def next_mode(mode: Mode) -> Mode:
    return MODES[(MODES.index(mode) + 1) % len(MODES)]


def mode_segment(policy: Policy) -> str:
    """The toolbar's part that names the mode."""
    return f"approvals: {LABELS[mode_of(policy)]}"


def sandbox_segment(policy: Policy) -> str:
    """Whether commands run in a sandbox (from the settings: cheap, nothing is probed)."""
    if policy.sandbox is None:
        return ""
    return f"sandbox {'on' if policy.sandbox.settings.enabled else 'off'}"


def describe(policy: Policy) -> str:
    mode = mode_of(policy)
    text = f"approvals: {LABELS[mode]}: {MEANINGS[mode]}"
    if mode == "yes" and policy.sandbox is not None and not policy.sandbox.active:
        text += "; no sandbox is active here, so approved commands run unconfined"
    return text


def parse_mode(argument: str) -> Mode | None:
    words = {"ask": "ask", "yes": "yes", "auto": "yes", "auto-approve": "yes", "deny": "deny"}
    return words.get(argument.strip().lower())  # type: ignore[return-value]


def approvals_command(repl: Any, argument: str) -> str:
    """`/approvals`: the mode and what it means; `/approvals MODE` switches to it."""
    from agentcli.errors import UsageError

    if argument:
        mode = parse_mode(argument)
        if mode is None:
            raise UsageError(f"no approval mode {argument!r}; {USAGE}")
        repl.set_approval_mode(mode)
    return f"  {describe(repl.agent.policy)}\n  {USAGE}"


def bind_cycle_key(bindings: Any, repl: Any) -> None:
    """Shift+Tab (BackTab) at the prompt: the next mode, shown at once by the toolbar.
    With the completion menu open, Shift+Tab keeps moving back through it."""
    from prompt_toolkit.filters import has_completions

    @bindings.add("s-tab", filter=~has_completions)
    def _cycle(event: Any) -> None:
        repl.set_approval_mode(next_mode(mode_of(repl.agent.policy)))
        event.app.invalidate()
