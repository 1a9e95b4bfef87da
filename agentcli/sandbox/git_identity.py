"""The git configuration a sandboxed command gets instead of the user's: their name and
email and the few settings git needs to behave the same, written to a file of the
sandbox's own (GIT_CONFIG_GLOBAL). The home directory's git files are never exposed:
`~/.config/git` holds `credentials` beside `config`, and a global config names credential
helpers, tokens in `url.*.insteadOf` and `http.extraHeader`."""

from __future__ import annotations

import os
import shutil
import subprocess

# The keys copied from the user's global configuration (includes followed): who commits,
# and what changes how git reads a repository. Nothing that runs a program or holds a secret.
COPIED = (
    "user.name",
    "user.email",
    "safe.directory",
    "init.defaultbranch",
    "core.autocrlf",
    "core.eol",
    "core.ignorecase",
    "core.precomposeunicode",
)
_ENV = ("HOME", "PATH", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL")


def user_settings(env: dict[str, str]) -> list[tuple[str, str]]:
    """(key, value) of COPIED in the user's global git configuration; [] without git."""
    git = shutil.which("git", path=env.get("PATH") or os.defpath)
    if git is None:
        return []
    pattern = "^(" + "|".join(key.replace(".", r"\.") for key in COPIED) + ")$"
    clean = {name: env[name] for name in _ENV if name in env}
    try:
        found = subprocess.run(
            [git, "config", "-z", "--global", "--includes", "--get-regexp", pattern],
            capture_output=True,
            env=clean,
            timeout=5,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    settings = []
    for item in found.stdout.split(b"\0"):
        key, _, value = item.decode("utf-8", "replace").partition("\n")
        if key.lower() in COPIED:
            settings.append((key.lower(), value))
    return settings


_ESCAPES = (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\t", "\\t"))


def _quoted(value: str) -> str:
    for raw, escaped in _ESCAPES:
        value = value.replace(raw, escaped)
    return f'"{value}"'


def render(settings: list[tuple[str, str]]) -> str:
    """A git configuration file holding `settings`, and no global ignore or attributes file
    (the user's are not readable in the sandbox; git would warn on every run)."""
    sections: dict[str, list[str]] = {"core": []}
    for key, value in settings:
        section, _, name = key.partition(".")
        sections.setdefault(section, []).append(f"\t{name} = {_quoted(value)}")
    sections["core"] += ["\texcludesFile = /dev/null", "\tattributesFile = /dev/null"]
    return "".join(
        f"[{section}]\n" + "".join(f"{line}\n" for line in lines)
        for section, lines in sections.items()
    )


def write_identity(path: str, env: dict[str, str]) -> str:
    """Writes the file (readable only by this user) and returns its path."""
    text = render(user_settings(env))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path
