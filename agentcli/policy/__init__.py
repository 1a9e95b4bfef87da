"""The risk policy: shell command classification, rules, remembered choices, decisions."""

from agentcli.policy.engine import (
    NO_TERMINAL_HINT,
    ApprovalRequest,
    Approver,
    Decision,
    Policy,
    Prompt,
    TurnCancelled,
    UserChoice,
    Verdict,
)

__all__ = [
    "NO_TERMINAL_HINT",
    "ApprovalRequest",
    "Approver",
    "Decision",
    "Policy",
    "Prompt",
    "TurnCancelled",
    "UserChoice",
    "Verdict",
]
