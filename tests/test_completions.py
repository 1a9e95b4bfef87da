"""The shipped completion scripts: up to date, complete, and (for bash) really completing."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from agentcli.cli.app import app
from agentcli.cli.completion_scripts import SHELLS

ROOT = Path(__file__).resolve().parent.parent
FILES = {"bash": "agentcli.bash", "zsh": "_agentcli", "fish": "agentcli.fish"}
# The installed console script of this venv, not whatever `agentcli` is first on PATH.
AGENTCLI = str(Path(sys.executable).with_name("agentcli"))


def _script(shell: str) -> Path:
    return ROOT / "completions" / FILES[shell]


def _app_model() -> dict[str, list[str]]:
    """Each subcommand with its long options, straight from the Typer app."""
    group = typer.main.get_command(app)
    help_names = group.context_settings.get("help_option_names", ["--help"])
    model: dict[str, list[str]] = {}
    for name, sub in group.commands.items():
        names = [opt for param in sub.params for opt in [*param.opts, *param.secondary_opts]]
        model[name] = [opt for opt in [*names, *help_names] if opt.startswith("--")]
    return model


def _mentions_option(shell: str, script: str, option: str) -> bool:
    if shell == "fish":
        return re.search(rf"-l {re.escape(option[2:])}(?![\w-])", script) is not None
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", script) is not None


def _mentions_command(shell: str, script: str, name: str) -> bool:
    pattern = {
        "bash": rf'^\s+"{name}"\) ',  # its own branch in the options case
        "zsh": rf"^\s+'{name}:",  # an entry of the _describe list
        "fish": rf"-a {name} -d ",  # offered as a subcommand
    }[shell]
    return re.search(pattern, script, re.MULTILINE) is not None


@pytest.mark.parametrize("shell", SHELLS)
def test_shipped_script_is_up_to_date(shell: str) -> None:
    printed = subprocess.run(
        [AGENTCLI, "completions", shell], capture_output=True, text=True, check=True
    ).stdout
    shipped = _script(shell).read_text() if _script(shell).exists() else ""
    assert shipped == printed, (
        f"completions/{FILES[shell]} is out of date with the CLI; regenerate it from the "
        f"repository root with: agentcli completions {shell} > completions/{FILES[shell]}"
    )


@pytest.mark.parametrize("shell", SHELLS)
def test_script_mentions_every_command_and_long_option(shell: str) -> None:
    script = _script(shell).read_text()
    model = _app_model()
    assert model, "the Typer app has no subcommands?"
    missing_commands = [name for name in model if not _mentions_command(shell, script, name)]
    missing_options = [
        f"{name} {option}"
        for name, options in model.items()
        for option in options
        if not _mentions_option(shell, script, option)
    ]
    assert not missing_commands, f"{shell}: subcommands not completed: {missing_commands}"
    assert not missing_options, f"{shell}: options not completed: {missing_options}"


def _bash_complete(words: list[str], cwd: Path | None = None) -> list[str]:
    """COMPREPLY after completing the last of `words` with the shipped bash function."""
    quoted = " ".join("'" + word.replace("'", "'\\''") + "'" for word in words)
    program = (
        f"source '{_script('bash')}'\n"
        f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; COMPREPLY=()\n"
        "_agentcli\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    result = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=True,
    )
    assert result.stderr == ""
    return [line for line in result.stdout.splitlines() if line]


def test_bash_completes_a_subcommand() -> None:
    assert _bash_complete(["agentcli", "r"]) == ["run"]
    assert _bash_complete(["agentcli", ""]) == list(_app_model())


def test_bash_completes_an_option() -> None:
    assert _bash_complete(["agentcli", "run", "--out"]) == ["--output"]
    assert _bash_complete(["agentcli", "run", "-m", "x", "--d"]) == ["--deny", "--debug"]


def test_bash_completes_option_values() -> None:
    assert _bash_complete(["agentcli", "run", "--output", "j"]) == ["json", "jsonl"]
    assert _bash_complete(["agentcli", "run", "--output", "=", ""]) == ["text", "json", "jsonl"]
    assert _bash_complete(["agentcli", "completions", ""]) == list(SHELLS)
    assert _bash_complete(["agentcli", "run", "--model", ""]) == []  # a free value


def test_bash_completes_directories_for_cwd(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "setup.cfg").write_text("")
    assert _bash_complete(["agentcli", "chat", "--cwd", "s"], cwd=tmp_path) == ["src"]


def test_bash_script_syntax() -> None:
    subprocess.run(["bash", "-n", str(_script("bash"))], check=True)


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_other_shells_syntax(shell: str) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    subprocess.run([shell, "-n", str(_script(shell))], check=True)


def test_unknown_shell_is_a_usage_error() -> None:
    result = subprocess.run([AGENTCLI, "completions", "powershell"], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "powershell" in result.stderr
