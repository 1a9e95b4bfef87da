"""The first time `chat` starts in a workspace whose project file was ignored, ask once
whether to trust it."""

from __future__ import annotations

from agentcli.config import trust
from agentcli.settings import RunSettings


def offer_trust(settings: RunSettings) -> bool:
    """True when the user chose to trust the workspace (the settings must be reloaded)."""
    ignored = settings.config.ignored
    if not trust.first_notice(settings.workspace, ignored):
        return False  # asked before: `agentcli trust` is how to change one's mind
    from prompt_toolkit.shortcuts import confirm

    print(
        f"{settings.workspace}/.agentcli/config.toml sets {', '.join(ignored)}, which an "
        "untrusted workspace may not set."
    )
    try:
        answer = confirm("Trust this workspace and apply them?")
    except (KeyboardInterrupt, EOFError):
        answer = False
    if answer:
        trust.set_trusted(settings.workspace, True)
    else:
        print("Not trusted: those settings are ignored (`agentcli trust` changes that).")
    return answer
