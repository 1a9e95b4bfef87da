"""The risk policy: shell command classification, rules, remembered choices, decisions."""

from agentcli.policy.engine import (
    NO_TERMINAL_HINT,
    Approver,
    Policy,
    Prompt,
    TurnCancelled,
    UserChoice,
    Verdict,
)
from agentcli.risk import ApprovalRequest, Decision  # kept here too: the policy's own words

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
