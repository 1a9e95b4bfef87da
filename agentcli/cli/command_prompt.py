"""`agentcli run /name ARGS`: a custom command headless. The command's prompt is what is
sent (its `@path`s attach, as in chat and as a typed prompt's do), with its model for the
run and its allowed-tools as a step before each call's decision
(agentcli.agent.narrowed_tools)."""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING

from agentcli.records import dataclass, field

if TYPE_CHECKING:
    from agentcli.agent.call_steps import CallStep
    from agentcli.settings import RunSettings

COMMAND_LIKE = re.compile(r"/([A-Za-z0-9][A-Za-z0-9_.:-]*)(?:\s+(.*))?", re.DOTALL)


@dataclass(slots=True)
class OneShotPrompt:
    settings: RunSettings
    text: str
    steps: list[CallStep] = field(default_factory=list)
    # The part typed by the user (the argument, or the command's prompt): its `@path`s
    # attach files; piped context below it is never searched for them.
    mentions_in: str = ""


def one_shot_prompt(
    settings: RunSettings, argument: str | None, stdin_text: str | None
) -> OneShotPrompt:
    """The run's prompt: a custom command's, when the prompt names one, else the prompt
    (with piped stdin below it, or as it)."""
    from agentcli.cli.prompt_input import build_prompt

    whole = build_prompt(argument, stdin_text)
    typed_argument = whole.partition("\n\n<stdin>\n")[0] if argument not in (None, "-") else ""
    plain = OneShotPrompt(settings, whole, mentions_in=typed_argument)
    typed = argument if argument not in (None, "-") else stdin_text
    match = COMMAND_LIKE.fullmatch((typed or "").strip())
    if match is None:
        return plain
    from agentcli.habits.commands import command_turn, find_commands, unknown_tools_note
    from agentcli.ui.slash import COMMANDS

    name, arguments = match.group(1), match.group(2) or ""
    found = find_commands(settings.workspace, settings.config.trusted, frozenset(COMMANDS))
    expansion = command_turn(found, name, arguments)
    if expansion is None:
        if not os.path.lexists("/" + name.split(":")[0]):  # not a path either: a typo?
            from agentcli.output.visible import one_line

            sys.stderr.write(f"agentcli: no custom command /{one_line(name)}; sent as written\n")
        return plain
    note = unknown_tools_note(name, expansion)
    if note is not None:
        sys.stderr.write(f"agentcli: {note}\n")
    if expansion.model is not None:
        from agentcli.assembly import with_model

        settings = with_model(settings, expansion.model)
    text = mentions_in = expansion.text
    if argument not in (None, "-") and stdin_text is not None:
        text = build_prompt(text, stdin_text)  # the piped context below the command's prompt
    steps: list[CallStep] = []
    if expansion.rules is not None:
        from agentcli.agent.narrowed_tools import NarrowedTools

        steps.append(NarrowedTools(expansion.rules, f"/{name}"))
    return OneShotPrompt(settings, text, steps, mentions_in=mentions_in)
