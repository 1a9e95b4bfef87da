"""The cached top-level help is what Typer renders, and printing it imports nothing heavy."""

from __future__ import annotations

import subprocess
import sys

from agentcli.cli.app import render_top_help
from agentcli.cli.cached_help import TOP_LEVEL_HELP

HEAVY = ("typer", "click", "httpx", "rich", "jsonschema", "prompt_toolkit", "pydantic")


def test_cached_help_is_current():
    assert render_top_help() == TOP_LEVEL_HELP, (
        "agentcli/cli/cached_help.py is stale: regenerate it with "
        "python -c 'from agentcli.cli.app import write_help_cache; write_help_cache()'"
    )


def loaded_after(args: list[str]) -> tuple[str, list[str]]:
    probe = (
        "import sys; from agentcli.__main__ import main; sys.argv = ['agentcli', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(sorted({{m.split('.')[0] for m, mod in sys.modules.items() if mod is not None}}"
        f" & set({HEAVY!r})), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *args],
        capture_output=True,
        text=True,
        check=True,
        stdin=subprocess.DEVNULL,
    )
    return done.stdout, eval(done.stderr.strip().splitlines()[-1])


def test_help_and_version_import_nothing_heavy():
    for args in (["--help"], ["-h"], ["--version"]):
        out, heavy = loaded_after(args)
        assert heavy == [], (args, heavy)
        assert out.startswith("Usage: agentcli") or out.startswith("agentcli ")


def test_bare_agentcli_is_not_the_help():
    # Alone it opens the REPL, or (stdin not a terminal) runs stdin: the help is --help's.
    out, _ = loaded_after([])
    assert "Usage: agentcli" not in out


def test_subcommand_help_imports_no_network_or_rendering_library():
    out, heavy = loaded_after(["run", "--help"])
    assert "--max-steps" in out
    assert not set(heavy) & {"httpx", "rich", "jsonschema", "prompt_toolkit"}
