"""Which paths a sandboxed command may read and write, for one profile: the system
directories programs need, the workspace, a private temp directory, the interpreters on
PATH, and the paths the user added. Everything else — your home directory, other users',
agentcli's own data and configuration — is not there."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from agentcli.records import dataclass
from agentcli.sandbox.profiles import Profile

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc",
               "/sys", "/var/cache/fontconfig")  # fmt: skip
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
# /etc is read entry by entry, leaving out what holds secrets (root could read them).
ETC_SECRETS = frozenset({"shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d",
                         "security", "ssh", "ssl", "credstore", "credstore.encrypted"})  # fmt: skip
# The only files of the home directory a command may read: git's own configuration, without
# which git refuses to run at all when its home is unreadable.
HOME_CONFIG = (".gitconfig", ".config/git")
ETC_PARTLY = {"ssh": lambda name: not name.endswith("_key"), "ssl": lambda name: name != "private"}


@dataclass(frozen=True, slots=True)
class Layout:
    """Absolute paths, as they are on the host (bubblewrap binds them at the same place)."""

    read: tuple[str, ...]
    write: tuple[str, ...]
    devices: tuple[str, ...]
    protected: tuple[str, ...]  # inside a writable path, but kept read-only
    network: bool
    temp: str
    workspace: str


def etc_entries(etc: str = "/etc") -> list[str]:
    entries = []
    try:
        names = sorted(os.listdir(etc))
    except OSError:
        return []
    for name in names:
        path = os.path.join(etc, name)
        if name in ETC_PARTLY:
            keep = ETC_PARTLY[name]
            try:
                entries.extend(os.path.join(path, n) for n in sorted(os.listdir(path)) if keep(n))
            except OSError:
                continue
        elif name not in ETC_SECRETS:
            entries.append(path)
    return entries


def toolchain_dirs(path_variable: str, home: str) -> list[str]:
    """Directories the programs on PATH live in. System ones are already readable; one under
    the home directory is made readable with what it needs to run: a virtual environment
    whole (its pyvenv.cfg and site-packages), a version manager's root for its shims (pyenv,
    rbenv, asdf), and a `lib` beside a `bin`. Never the home directory itself."""
    found: list[str] = []
    home_path = Path(home) if home else None
    for entry in path_variable.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        for candidate in {entry, os.path.realpath(entry)}:
            path = Path(candidate)
            if not path.is_dir() or _is_system(candidate):
                continue
            parent = path.parent
            if home_path is not None and parent == home_path:
                found.append(str(path))  # ~/bin: the directory only
            elif (parent / "pyvenv.cfg").is_file() or path.name == "shims":
                found.append(str(parent))
            else:
                found.append(str(path))
                if path.name == "bin" and (parent / "lib").is_dir():
                    found.append(str(parent / "lib"))
    return found


def interpreter_dirs(executable: str) -> list[str]:
    """What a Python interpreter needs to start: its installation prefix (found through any
    symlink) and, for a virtual environment, the environment's own directory."""
    dirs = []
    unresolved = Path(executable)
    if (unresolved.parent.parent / "pyvenv.cfg").is_file():
        dirs.append(str(unresolved.parent.parent))
    real = Path(os.path.realpath(executable))
    if len(real.parents) >= 2 and not _is_system(str(real)):
        dirs.append(str(real.parents[1]))
    return dirs


def protected_paths(workspace: str, *, existing_only: bool = True) -> list[str]:
    """Inside the workspace but never writable: what makes git or agentcli run programs.
    With existing_only=False, also those that do not exist yet (creating one is a change)."""
    root = Path(workspace)
    candidates = [root / ".agentcli"]
    git = root / ".git"
    if git.is_file():  # a linked worktree or submodule: the pointer itself must not move
        candidates.append(git)
    elif git.is_dir():
        candidates += [git / "hooks", git / "config", git / "config.worktree"]
        modules = git / "modules"
        if modules.is_dir():
            for config in modules.rglob("config"):
                candidates += [config, config.parent / "hooks"]
    if not existing_only:
        return [str(p) for p in candidates]
    return [str(p) for p in candidates if p.exists() or p.is_symlink()]


def _is_system(path: str) -> bool:
    return any(path == d or path.startswith(d + "/") for d in SYSTEM_DIRS) or path.startswith(
        "/etc/"
    )


def _existing(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p for p in paths if os.path.exists(p)))


def build_layout(
    profile: Profile,
    workspace: str,
    temp: str,
    *,
    path_variable: str,
    home: str,
    executables: Sequence[str] = (),
    extra_read: Sequence[str] = (),
    extra_write: Sequence[str] = (),
) -> Layout:
    read = [*SYSTEM_DIRS, *etc_entries(), *toolchain_dirs(path_variable, home), workspace]
    if home:
        read += [os.path.join(home, name) for name in HOME_CONFIG]
    for executable in executables:
        read += interpreter_dirs(executable)
    read += extra_read
    write = [temp]
    protected: list[str] = []
    if profile in (Profile.WORKSPACE_WRITE, Profile.NETWORK):
        write += [workspace, *extra_write]
        protected = protected_paths(workspace)
    return Layout(
        read=_existing(read),
        write=_existing(write),
        devices=_existing(DEVICES),
        protected=tuple(protected),
        network=profile is Profile.NETWORK,
        temp=temp,
        workspace=workspace,
    )
