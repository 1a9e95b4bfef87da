"""`agentcli run` and `agentcli chat`: settings, session, then one prompt or the REPL.

Free of the CLI framework, so that the fast path of agentcli.__main__ can call it directly."""

from __future__ import annotations

import sys
from typing import Any

from agentcli.errors import AgentCliError


def one_shot(
    prompt: str | None, output: str, continue_: bool, resume: str | None, **flags: Any
) -> int:
    from agentcli.assembly import resolve_settings
    from agentcli.cli.command_prompt import one_shot_prompt
    from agentcli.cli.one_shot import open_session, print_error, run_in_event_loop
    from agentcli.cli.prompt_input import read_stdin

    try:
        settings = resolve_settings(output=output, **flags)
        stdin_text = read_stdin(prompt_expected=prompt in (None, "-"))
        asked = one_shot_prompt(settings, prompt, stdin_text)  # a custom command's, or as typed
        session = open_session(asked.settings, resume=resume, continue_=continue_)
    except AgentCliError as error:
        print_error(str(error))
        return error.exit_code
    if resume or continue_:
        sys.stderr.write(f"agentcli: {continued(session)}\n")
    return run_in_event_loop(asked.settings, asked.text, session, asked)


def continued(session: Any) -> str:
    """Which session a run continues: its id, title (its first prompt) and turns so far."""
    from agentcli.output.visible import one_line

    prompts = [m.content for m in session.conversation.messages if m.role == "user"]
    title = " ".join(prompts[0].split()) if prompts else ""
    title = one_line(title if len(title) <= 60 else title[:59] + "…")
    said = f" “{title}”" if title else ""
    turns = f"{len(prompts)} earlier turn{'s' if len(prompts) != 1 else ''}"
    return f"continuing session {session.id}{said} ({turns})"


def interactive(continue_: bool, resume: str | None, **flags: Any) -> int:
    from agentcli.assembly import resolve_settings
    from agentcli.cli.one_shot import open_session, print_error, startup_notices

    try:
        settings = resolve_settings(output="text", **flags)
        if settings.config.ignored:
            from agentcli.ui.trust_prompt import offer_trust

            if offer_trust(settings):
                settings = resolve_settings(output="text", **flags)
        session = open_session(settings, resume=resume, continue_=continue_)
    except AgentCliError as error:
        print_error(str(error))
        return error.exit_code
    startup_notices(settings, session)
    from agentcli.ui.repl import run_repl

    return run_repl(settings, session)


def run(values: dict[str, Any]) -> int:
    """`agentcli run` with its parsed values (agentcli.cli.options names them)."""
    from agentcli.cli.options import split_settings

    flags, own = split_settings(values)
    return one_shot(own["prompt"], own["output"], own["continue_"], own["resume"], **flags)


def chat(values: dict[str, Any]) -> int:
    """`agentcli chat`: the REPL on a terminal, else stdin as one prompt."""
    from agentcli.cli.options import split_settings

    flags, own = split_settings(values)
    if sys.stdin is not None and sys.stdin.isatty():
        return interactive(own["continue_"], own["resume"], **flags)
    return one_shot(None, "text", own["continue_"], own["resume"], **flags)
