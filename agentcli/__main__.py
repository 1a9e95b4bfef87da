"""Entry point for the `agentcli` command and `python -m agentcli`."""

from __future__ import annotations

import sys


def main() -> None:
    from agentcli.cli.import_path import drop_planted_entries

    drop_planted_entries()  # before anything else is imported (agentcli.cli.import_path)
    # Answer --version and the top-level help before importing the CLI framework.
    args = sys.argv[1:]
    if args in (["--version"], ["-V"]):
        from agentcli import __version__

        print(f"agentcli {__version__}")
        return
    if args in (["--help"], ["-h"]):
        from agentcli.cli.cached_help import TOP_LEVEL_HELP

        sys.stdout.write(TOP_LEVEL_HELP)
        return
    from agentcli.text.decoding import guard_stream

    guard_stream(sys.stdout)  # a lone surrogate that reaches the terminal is shown, not raised
    guard_stream(sys.stderr)
    from agentcli.cli.options import entry_args, lift_debug
    from agentcli.errors import UsageError

    args, debug = lift_debug(args)
    try:
        args = entry_args(args, sys.stdin is not None and _isatty(sys.stdin))
    except UsageError as error:
        sys.stderr.write(f"agentcli: error: {error}\n")
        sys.exit(error.exit_code)
    command = "policy explain" if args[:2] == ["policy", "explain"] else args[0] if args else ""
    if command in ("run", "chat", "policy explain"):
        # A plain line of these is parsed without Typer (and pydantic, which it imports), so
        # they start in a fraction of the time. Anything unusual is Typer's, as the rest.
        from agentcli.cli.options import parse

        values = parse(command, args[len(command.split()) :])
        if values is not None:
            from agentcli.errors import last_net

            sys.exit(last_net(lambda: _fast(command, values), args))
    from agentcli.cli.app import run_app

    sys.exit(run_app(args, debug=debug))


def _isatty(stream) -> bool:  # type: ignore[no-untyped-def]
    try:
        return stream.isatty()
    except ValueError:  # closed
        return False


def _fast(command: str, values: dict) -> int:
    if command == "policy explain":
        from agentcli.cli.commands.policy_commands import explain_main

        return explain_main(values)
    from agentcli.cli.commands import agent_commands

    return agent_commands.run(values) if command == "run" else agent_commands.chat(values)


if __name__ == "__main__":
    main()
