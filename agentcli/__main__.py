"""Entry point for the `agentcli` command and `python -m agentcli`."""

from __future__ import annotations

import sys


def main() -> None:
    # Answer --version before importing the CLI framework: it must be instant.
    if sys.argv[1:] in (["--version"], ["-V"]):
        from agentcli import __version__

        print(f"agentcli {__version__}")
        return
    from agentcli.cli import run_app

    sys.exit(run_app())


if __name__ == "__main__":
    main()
