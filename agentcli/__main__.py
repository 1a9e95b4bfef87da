"""Entry point for the `agentcli` command and `python -m agentcli`."""

from __future__ import annotations

import sys


def main() -> None:
    # Answer --version and the top-level help before importing the CLI framework.
    args = sys.argv[1:]
    if args in (["--version"], ["-V"]):
        from agentcli import __version__

        print(f"agentcli {__version__}")
        return
    if args in ([], ["--help"], ["-h"]):
        from agentcli._help_text import TOP_LEVEL_HELP

        sys.stdout.write(TOP_LEVEL_HELP)
        return
    if args and args[0] in ("run", "chat"):
        # A plain `run`/`chat` line is parsed without Typer (and pydantic, which it imports):
        # the one-shot path starts in a fraction of the time. Anything else is Typer's.
        from agentcli.cli_options import parse

        values = parse(args[0], args[1:])
        if values is not None:
            from agentcli.commands import agent_commands
            from agentcli.errors import last_net

            action = agent_commands.run if args[0] == "run" else agent_commands.chat
            sys.exit(last_net(lambda: action(values), args))
    from agentcli.cli import run_app

    sys.exit(run_app())


if __name__ == "__main__":
    main()
