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

SYSTEM_DIRS = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/proc",
    "/sys",
    "/var/cache/fontconfig",
)
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
# /etc is read entry by entry, leaving out what holds secrets (root could read them).
ETC_SECRETS = frozenset(
    {
        "shadow",
        "shadow-",
        "gshadow",
        "gshadow-",
        "sudoers",
        "sudoers.d",
        "security",
        "ssh",
        "ssl",
        "credstore",
        "credstore.encrypted",
    }
)
# What a directory on PATH must not be, or hold, to be exposed: the places of the home
# directory where secrets are kept (agentcli's own directories are added to these).
HOME_SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".config/gcloud",
    ".config/gh",
    ".config/git",
    ".password-store",
    ".pgpass",
)
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
    pinned: tuple[str, ...] = ()  # writable directories that may not be moved (`.git`)


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


def exposable(directory: str, home: str, secrets: Sequence[str]) -> bool:
    """Whether a directory may be exposed to a command: never the home directory or one
    above it, nor one that is, holds or sits inside a place of secrets."""
    real = os.path.realpath(directory)
    if home and _within(os.path.realpath(home), real):
        return False
    return not any(_within(secret, real) or _within(real, secret) for secret in secrets)


def secret_places(home: str, own: Sequence[str] = ()) -> list[str]:
    """The places `exposable` keeps out: the home's secrets and agentcli's own directories."""
    places = [os.path.realpath(p) for p in own]
    if home:
        places += [os.path.realpath(os.path.join(home, name)) for name in HOME_SECRETS]
    return places


def toolchain_dirs(path_variable: str, home: str, secrets: Sequence[str] = ()) -> list[str]:
    """Directories the programs on PATH live in. System ones are already readable; one under
    the home directory is made readable with what it needs to run: a virtual environment
    whole (its pyvenv.cfg and site-packages), a version manager's root for its shims (pyenv,
    rbenv, asdf), and a `lib` beside a `bin`. Never the home directory itself (a PATH entry
    that is the home is skipped), nor a directory that holds secrets or agentcli's data."""
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
    return [d for d in found if exposable(d, home, secrets)]


def interpreter_dirs(executable: str, home: str = "", secrets: Sequence[str] = ()) -> list[str]:
    """What a program needs to start: an interpreter's installation prefix (found through
    any symlink), a virtual environment's own directory, the directory of the name it is
    started by, and a Node package's whole `node_modules` (never the home directory, nor a
    place of secrets)."""
    dirs = []
    unresolved = Path(executable)
    if (unresolved.parent.parent / "pyvenv.cfg").is_file():
        dirs.append(str(unresolved.parent.parent))
    real = Path(os.path.realpath(executable))
    if len(real.parents) >= 2 and not _is_system(str(real)):
        dirs.append(str(real.parents[1]))
        dirs.append(str(real.parent))  # at least its own directory, when the prefix is not
    if not _is_system(str(unresolved)):
        dirs.append(str(unresolved.parent))  # the name it is started by (a symlink in .bin)
    dirs += [root for path in (unresolved, real) if (root := _node_modules_root(path))]
    return [d for d in dirs if exposable(d, home, secrets)]


def _node_modules_root(path: Path) -> str | None:
    """The outermost `node_modules` a script sits in (`node_modules/.bin/server` links into
    a package whose dependencies are its siblings, found by walking up every
    `node_modules`): the whole tree, read-only."""
    roots = [parent for parent in path.parents if parent.name == "node_modules"]
    return str(roots[-1]) if roots else None


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


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
    own: Sequence[str] = (),
    files: Sequence[str] = (),
    protected: Sequence[str] = (),
    pinned: Sequence[str] = (),
    always_write: Sequence[str] = (),
) -> Layout:
    """`own`: agentcli's directories, never exposed; `always_write`: written whatever the
    profile (a server's own `dirs`, kept outside the workspace); `files`: single files commands may
    read (the git identity agentcli writes for them); `protected` and `pinned`: the
    workspace's protected paths that exist and its `.git` directories, kept read-only and
    in place where the profile writes the workspace (agentcli.sandbox.guard finds them)."""
    secrets = secret_places(home, own)
    read = [*SYSTEM_DIRS, *etc_entries(), *toolchain_dirs(path_variable, home, secrets)]
    read.append(workspace)
    for executable in executables:
        read += interpreter_dirs(executable, home, secrets)
    read += [*extra_read, *files]
    write = [temp, *always_write]
    writes = profile in (Profile.WORKSPACE_WRITE, Profile.NETWORK)
    if writes:
        write += [workspace, *extra_write]
    return Layout(
        read=_existing(read),
        write=_existing(write),
        devices=_existing(DEVICES),
        protected=tuple(protected) if writes else (),
        pinned=tuple(pinned) if writes else (),
        network=profile is Profile.NETWORK,
        temp=temp,
        workspace=workspace,
    )
