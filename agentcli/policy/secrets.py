"""Commands that would read secrets inside the workspace — `.env` files, key and credential
files, a `.git/config` that holds a token — are never low risk: what a command prints goes
to the model's provider. Named files are checked by agentcli.workspace.sensitive; here, what reads
them without naming them: a recursive search over a tree that holds one, and git printing
a configuration that holds a credential."""

from __future__ import annotations

import os
import re
from pathlib import Path

from agentcli.policy.shell_parse import SimpleCommand
from agentcli.regular_files import read_text
from agentcli.workspace.sensitive import sensitive_reason

MAX_ENTRIES = 20_000  # a tree larger than this is not searched for them: it may hold one
# Whether a program reads a directory's files recursively: always, or given these options.
RECURSIVE: dict[str, frozenset[str] | None] = {
    "grep": frozenset({"-r", "--recursive", "-d", "--directories"}),
    "egrep": frozenset({"-r", "--recursive"}),
    "fgrep": frozenset({"-r", "--recursive"}),
    "rg": None,
    "ag": None,
    "ack": None,
}
# ripgrep, ag and ack skip hidden files unless told otherwise.
SEES_HIDDEN = frozenset({"--hidden", "-.", "-u", "-uu", "-uuu", "--unrestricted", "-a"})
_CREDENTIAL = re.compile(
    r"extraheader|://[^/\s:@]+:[^/\s@]+@|(token|password|secret)\s*=",
    re.IGNORECASE | re.MULTILINE,
)


def _recurses(command: SimpleCommand) -> bool:
    options = RECURSIVE.get(command.program, frozenset())
    if options is None:
        return True
    for arg in command.argv[1:]:
        if arg in options or arg.startswith("--directories=recurse"):
            return True
        if arg.startswith("-") and not arg.startswith("--") and "r" in arg[1:]:
            return True  # bundled: -rn, -irl
    return False


def sensitive_below(directory: Path, *, hidden: bool = True) -> str | None:
    """The first file below `directory` that holds secrets (without following links), as
    a relative path; "…" when the tree is too large to tell; None when it holds none."""
    seen = 0
    for root, dirs, files in os.walk(directory):
        seen += len(dirs) + len(files)
        if seen > MAX_ENTRIES:
            return "…"
        if ".git" in dirs:  # git's objects are no secret; its configuration may hold one
            dirs.remove(".git")
            config = Path(root, ".git", "config")
            if hidden and holds_credential(config):
                return str(config.relative_to(directory))
        if not hidden:
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            files = [f for f in files if not f.startswith(".")]
        for name in files:
            path = Path(root, name)
            if sensitive_reason(path, writing=False):
                return str(path.relative_to(directory))
    return None


def holds_credential(config: Path) -> bool:
    """Whether a git configuration holds a token or password (not just a helper's name)."""
    try:
        text = read_text(config, errors="replace")
    except OSError:
        return False
    return _CREDENTIAL.search(text) is not None


def recursive_problem(command: SimpleCommand, operands: list[str], cwd: Path) -> str | None:
    """Why a recursive search over these operands (the working directory without any) may
    read a secret, or None."""
    if command.program not in RECURSIVE or not _recurses(command):
        return None
    hidden = RECURSIVE[command.program] is not None or any(
        arg in SEES_HIDDEN for arg in command.argv[1:]
    )
    for operand in operands or ["."]:
        path = Path(os.path.realpath(cwd / os.path.expanduser(operand)))
        if not path.is_dir():
            continue
        found = sensitive_below(path, hidden=hidden)
        if found == "…":
            return f"`{command.program}` would read a tree too large to check for secrets"
        if found is not None:
            return f"`{command.program}` would read {found}, which may hold secrets"
    return None


def git_config_problem(subcommand: str, here: Path) -> str | None:
    """`git config` and `git remote -v` print the repository's configuration: not low when
    it holds a credential (CI checkouts keep a token in `http.*.extraheader`)."""
    if subcommand not in ("config", "remote"):
        return None
    for directory in (here, *here.parents):
        config = directory / ".git" / "config"
        if config.is_file():
            if holds_credential(config):
                return f"`git {subcommand}` prints .git/config, which holds a credential"
            return None
    return None
