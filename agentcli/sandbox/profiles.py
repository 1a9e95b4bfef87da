"""The sandbox profiles a command can run in, from least to most it may do, and which
profile a call's risk earns without asking for more."""

from __future__ import annotations

from enum import StrEnum

from agentcli.risk import Risk


class Profile(StrEnum):
    READ_ONLY = "read-only"  # read the workspace and the system; write only a private temp dir
    WORKSPACE_WRITE = "workspace-write"  # also write the workspace, except protected paths
    NETWORK = "network"  # workspace-write plus the network
    NONE = "none"  # no sandbox at all

    @property
    def rank(self) -> int:
        return list(Profile).index(self)

    @property
    def summary(self) -> str:
        return SUMMARIES[self]


SUMMARIES = {
    Profile.READ_ONLY: "reads the workspace and system files; writes only a private temp "
    "directory; no network; cannot see your home directory or agentcli's environment",
    Profile.WORKSPACE_WRITE: "as read-only, and writes the workspace except what git follows "
    "in each .git, the workspace's and those below it (hooks, config, commondir, info/, "
    "alternates), and .agentcli/",
    Profile.NETWORK: "as workspace-write, and reaches the network",
    Profile.NONE: "no sandbox: the command can do whatever your user can",
}

# The profiles whose commands may write the workspace (its protected paths are watched).
WRITES = frozenset({Profile.WORKSPACE_WRITE, Profile.NETWORK})

# What a call gets without asking for more: a low call is read-only; a call someone had to
# approve (medium or high) may write the workspace, but never leaves the sandbox unasked.
EARNED = {
    Risk.LOW: Profile.READ_ONLY,
    Risk.MEDIUM: Profile.WORKSPACE_WRITE,
    Risk.HIGH: Profile.WORKSPACE_WRITE,
}

# The risk of asking for more than the policy would grant (Codex's escalation).
ESCALATION_RISK = {
    Profile.READ_ONLY: Risk.LOW,
    Profile.WORKSPACE_WRITE: Risk.MEDIUM,
    Profile.NETWORK: Risk.HIGH,
    Profile.NONE: Risk.HIGH,
}
