"""`/status`: where this chat stands, one fact a line — model and provider, workspace, the
places added, approval mode, sandbox, context, session."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.output.visible import one_line

if TYPE_CHECKING:
    from agentcli.agent.session import Agent


def approval_mode(agent: Agent) -> str:
    policy = agent.policy
    if policy.deny:
        return "deny: calls that would ask are denied (--deny)"
    if policy.yes:
        return "yes: calls that would ask are approved, inside the sandbox (--yes)"
    return "ask: medium and high risk calls ask first"


def sandbox_line(agent: Agent) -> str:
    from agentcli.sandbox.profiles import EARNED

    sandbox = agent.sandbox
    if not sandbox.settings.enabled:
        return "off: commands run with your full access (--sandbox none or sandbox.mode)"
    backend = sandbox.backend
    if backend is None:
        return "none available here: commands run with your full access (agentcli doctor)"
    profiles = ", ".join(f"{risk.label} → {profile}" for risk, profile in EARNED.items())
    network = "allowed" if sandbox.settings.allow_network else "off"
    return f"{backend}; by risk: {profiles}; network {network}"


def places_line(agent: Agent) -> str:
    """The places a person added (--add-dir, sandbox.add_dirs, /add-dir), with their mode."""
    added = [p for p in agent.sandbox.settings.places if not p.kept]
    if not added:
        return "none besides the workspace (/add-dir DIR[:ro] adds one)"
    modes = {True: "read-write", False: "read-only"}
    return ", ".join(f"{one_line(p.path)} ({modes[p.writable]})" for p in added)


def status_lines(agent: Agent) -> list[str]:
    from agentcli.ui.context_meter import measure

    settings, session = agent.settings, agent.session
    provider = settings.provider
    where = f" at {provider.base_url}" if provider.base_url else ""
    use = measure(agent)
    if use.window.tokens:
        context = f"{use.percent}% full ({use.used:,} of {use.window.tokens:,} tokens)"
    else:
        context = f"{use.used:,} tokens; window not known (set context.window)"
    saved = f" (not saved: {session.unsaved})" if session.unsaved else ""
    small = []
    if provider.type == "local":  # what the tiny embedded model can and cannot do
        from agentcli.providers.local.about import about_lines

        small = about_lines()
    return [
        f"model      {one_line(agent.model)}",
        *small,
        f"provider   {one_line(f'{provider.name} ({provider.type}){where}')}",
        f"workspace  {one_line(settings.workspace)}",
        f"places     {places_line(agent)}",
        f"approvals  {approval_mode(agent)}",
        f"sandbox    {sandbox_line(agent)}",
        f"context    {context}",
        f"session    {session.id}{saved}",
    ]
