"""Arguments that make a program run another program: `git push --receive-pack=PROG`,
`git clone -u PROG`, `rsync -e PROG`, `tar --to-command=PROG`, `find -exec`. An allow rule's
wildcard never covers them (agentcli.policy.rules.command_allowed_by), so `git push *`,
remembered for `git push origin main`, does not also allow `git push --receive-pack=...`.

Long options are matched by name and by every prefix of it (GNU and git accept unique
abbreviations: `--rec=PROG`); short ones anywhere in a bundle (`-vuPROG`)."""

from __future__ import annotations

import re

# Any program: long options whose name says they name a program to run.
_GENERIC_LONG = re.compile(
    r"^(exec|rsh|pager|editor|shell|command|run|[\w-]*-(command|cmd|program|prog|pack|exec|"
    r"shell|hook|helper|editor|pager|script))$"
)

# program -> (long option names, short option letters) that run programs.
_TAR_LONG = frozenset(
    {
        "use-compress-program",
        "to-command",
        "checkpoint-action",
        "info-script",
        "new-volume-script",
        "rsh-command",
    }
)
_PROGRAMS: dict[str, tuple[frozenset[str], str]] = {
    "rsync": (frozenset({"rsh", "rsync-path"}), "e"),
    "tar": (_TAR_LONG, "IF"),
    "ssh": (frozenset(), "oFS"),
    "scp": (frozenset(), "oFS"),
    "sftp": (frozenset(), "oFS"),
    "zip": (frozenset({"unzip-command"}), ""),
    "man": (frozenset({"pager", "html"}), "PH"),
    "npm": (frozenset({"script-shell"}), ""),
    "pytest": (frozenset(), "p"),
}
# git subcommand -> (long options, short letters, subcommand words) that run programs.
_GIT_LONG = frozenset(
    {
        "receive-pack",
        "upload-pack",
        "exec",
        "config",
        "config-env",
        "exec-path",
        "template",
        "extcmd",
        "tool",
        "open-files-in-pager",
    }
)
_GIT: dict[str, tuple[str, frozenset[str]]] = {
    "clone": ("uc", frozenset()),
    "rebase": ("x", frozenset()),
    "grep": ("O", frozenset()),
    "difftool": ("xt", frozenset()),
    "mergetool": ("t", frozenset()),
    "submodule": ("", frozenset({"foreach"})),
    "bisect": ("", frozenset({"run"})),
    "config": ("", frozenset()),  # any key can name a program: never by a wildcard
}
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _long_name(word: str) -> str:
    return word[2:].split("=", 1)[0]


def _abbreviates(name: str, names: frozenset[str]) -> bool:
    return bool(name) and any(full.startswith(name) for full in names)


def runs_program(argv: tuple[str, ...], index: int) -> bool:
    """Whether argv[index] makes argv's program run another program."""
    program = argv[0].rsplit("/", 1)[-1]
    word = argv[index]
    if program == "find":
        return word in _FIND_EXEC
    if program == "git":
        return _git_runs_program(argv, index)
    longs, shorts = _PROGRAMS.get(program, (frozenset(), ""))
    if word.startswith("--"):
        name = _long_name(word)
        return bool(_GENERIC_LONG.match(name)) or _abbreviates(name, longs)
    if word.startswith("-") and len(word) > 1:
        return any(letter in shorts for letter in word[1:])
    return False


def _git_runs_program(argv: tuple[str, ...], index: int) -> bool:
    subcommand = next((w for w in argv[1:] if not w.startswith("-")), "")
    shorts, words = _GIT.get(subcommand, ("", frozenset()))
    if subcommand == "config":
        return True
    word = argv[index]
    if word in words:
        return True
    if word.startswith("--"):
        name = _long_name(word)
        return bool(_GENERIC_LONG.match(name)) or _abbreviates(name, _GIT_LONG)
    if word.startswith("-") and len(word) > 1:
        before_subcommand = subcommand not in argv[1:index]
        return any(c in (shorts + ("c" if before_subcommand else "")) for c in word[1:])
    return False
