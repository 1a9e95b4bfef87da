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
    from agentcli.cli import run_app

    sys.exit(run_app())


if __name__ == "__main__":
    main()
