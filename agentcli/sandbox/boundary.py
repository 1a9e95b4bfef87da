"""One boundary around the whole agent: what any tool may read and write.

Commands get it from the OS sandbox (the layout of their profile); the tools that run
inside agentcli — files, search, a provider's editor — ask it here before they open
anything, and open what it allowed through descriptors (agentcli.workspace.safe_open). The sets are
the workspace-write profile's: the workspace, the system directories commands see, the
sandbox's private temp directory, this session's saved command outputs (to read), and the
places a person added (`--add-dir DIR`, read-write, or `DIR:ro`). No flag widens it: a
person widens it by naming a place, or by approving, at a prompt, one call that reaches
one path. agentcli's own configuration and data are never written by any tool, and the
places git and agentcli follow inside a writable tree (`.git`, `.agentcli`) are not written
without that approval either."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from agentcli.records import dataclass
from agentcli.risk import Outside

# Names that, wherever they sit in a writable tree, hold what git or agentcli follow:
# hooks, configuration, `commondir`, `gitdir` pointers, alternates, a project's rules.
PROTECTED_NAMES = frozenset({".git", ".agentcli"})
# In-process tools run in agentcli's own process: /proc/self is agentcli (its environment
# holds the API key), and devices are not files. Commands see their own /proc, not ours.
NOT_FOR_TOOLS = ("/proc", "/sys", "/dev")


@dataclass(frozen=True, slots=True)
class Place:
    """A directory a person added to the boundary, or one agentcli adds for them to read
    (a skill's folder: `kept` says what it is, and no tool ever writes there)."""

    path: str  # absolute, symlinks resolved
    writable: bool
    kept: str = ""

    def __str__(self) -> str:
        return self.path if self.writable else f"{self.path}:ro"


def within(path: str, root: str) -> bool:
    """By whole components: `/w/proj-evil` is not within `/w/proj`."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def own_directories() -> tuple[str, ...]:
    """agentcli's configuration, data and cache, resolved."""
    from agentcli.paths import cache_dir, config_dir, data_dir

    return tuple(
        dict.fromkeys(os.path.realpath(p) for p in (config_dir(), data_dir(), cache_dir()))
    )


class PlaceError(ValueError):
    """An --add-dir (or sandbox.add_dirs) entry that cannot be a place."""


def parse_place(text: str) -> Place:
    """`DIR`, `DIR:rw` or `DIR:ro` → a Place; `~` is expanded, symlinks resolved. The
    directory must exist and must not hold agentcli's own configuration or data."""
    path, writable = text, True
    for suffix, mode in ((":ro", False), (":rw", True)):
        if text.endswith(suffix):
            path, writable = text[: -len(suffix)], mode
            break
    if not path:
        raise PlaceError(f"{text!r} names no directory (use DIR, DIR:ro or DIR:rw)")
    real = os.path.realpath(os.path.expanduser(path))
    if not os.path.exists(real):
        raise PlaceError(f"{path} is not a directory: nothing is there")
    if not os.path.isdir(real):
        raise PlaceError(f"{path} is a file, not a directory; name the directory that holds it")
    if real == "/":
        raise PlaceError("/ is the whole machine; name the directory the task needs")
    for own in own_directories():
        if within(own, real):
            raise PlaceError(
                f"{path} holds agentcli's own configuration or data ({own}), which no tool "
                "may reach; name a directory that does not contain it"
            )
        if within(real, own):
            raise PlaceError(
                f"{path} is inside agentcli's own configuration or data ({own}), which no "
                "tool may reach; change what is there yourself"
            )
    return Place(real, writable)


def _protected_part(path: str, root: str) -> str | None:
    """The first `.git` or `.agentcli` component of `path` below `root`, or None (names
    compared ignoring case where the file system does)."""
    rest = path[len(root) :].strip("/")
    parts = rest.split("/") if rest else []
    if not any(part.casefold() in PROTECTED_NAMES for part in parts):
        return None
    from agentcli.workspace.sensitive import folds_case_at

    fold = folds_case_at(Path(path))
    return next((p for p in parts if (p.casefold() if fold else p) in PROTECTED_NAMES), None)


class Boundary:
    """Answers "may a tool read / write this path" (resolved, absolute). `enforced` is
    False only when the sandbox is off (`--sandbox none`, `sandbox.mode = "off"`): then
    only agentcli's own files stay out of reach. `system` gives the directories commands
    may read besides the workspace (the sandbox's layout), asked for the first time a path
    outside every other place is checked."""

    def __init__(
        self,
        workspace: Path | str,
        places: Sequence[Place] | Callable[[], Sequence[Place]] = (),
        *,
        enforced: bool = True,
        system: Callable[[], Iterable[str]] | None = None,
        temp: Callable[[], str | None] | None = None,
        outputs: Path | None = None,
    ) -> None:
        self.workspace = os.path.realpath(workspace)
        # A callable: the places as they are now (a REPL's /add-dir adds one mid-session).
        self._places = places if callable(places) else (lambda fixed=tuple(places): fixed)
        self.enforced = enforced
        self._system = system
        self._system_dirs: tuple[str, ...] | None = None
        self._temp = temp
        self.outputs = os.path.realpath(outputs) if outputs is not None else None
        self.own = own_directories()

    # --- the sets

    @property
    def places(self) -> tuple[Place, ...]:
        return tuple(self._places())

    @property
    def system_dirs(self) -> tuple[str, ...]:
        if self._system_dirs is None:
            found = self._system() if self._system is not None else ()
            dirs = (os.path.realpath(p) for p in found)
            self._system_dirs = tuple(
                dict.fromkeys(d for d in dirs if not any(within(d, bad) for bad in NOT_FOR_TOOLS))
            )
        return self._system_dirs

    @property
    def temp(self) -> str | None:
        made = self._temp() if self._temp is not None else None
        return os.path.realpath(made) if made else None

    def writable_roots(self) -> list[str]:
        roots = [self.workspace, *(p.path for p in self.places if p.writable)]
        temp = self.temp
        return [*roots, temp] if temp else roots

    def readable_roots(self) -> list[str]:
        roots = [*self.writable_roots(), *(p.path for p in self.places if not p.writable)]
        if self.outputs:
            roots.append(self.outputs)
        return roots

    # --- the questions

    def check(self, path: Path | str, *, writing: bool) -> Outside | None:
        """None when a tool may reach `path` on its own; else why not, and how to allow."""
        real = str(path)
        if writing and (kept := self._kept_in(real)) is not None:
            return Outside(
                real,
                f"{real} is in {kept.kept} ({kept.path}), which tools read but never write; "
                "change it yourself",
                never=True,
            )
        if writing and any(within(real, own) for own in self.own):
            return Outside(
                real,
                "agentcli's own configuration and data are never written by a tool; change "
                "them yourself (agentcli config set, agentcli trust)",
                never=True,
            )
        if not self.enforced:
            return None
        if writing:
            root = self._root_in(real, self.writable_roots())
            if root is None:
                return Outside(real, self._outside_why(real, writing=True))
            part = _protected_part(real, root)
            if part is not None:
                from agentcli.workspace.sensitive import sensitive_reason

                what = sensitive_reason(Path(real), writing=True) or (
                    f"{part} holds what git or agentcli follow (hooks, configuration, "
                    "pointers to other directories)"
                )
                return Outside(
                    real, f"{what}; a tool writes there only with your approval of that one call"
                )
            return None
        if self._root_in(real, self.readable_roots()) is not None:
            return None
        if any(within(real, own) for own in self.own):
            return Outside(real, self._outside_why(real, writing=False, own=True))
        if self._root_in(real, self.system_dirs) is not None:
            return None
        return Outside(real, self._outside_why(real, writing=False))

    def holds(self, path: Path | str, *, writing: bool) -> bool:
        """Whether `path` is in the workspace or a place a person added (writable, to
        write): where tools work as in the workspace, asking only as its risk says."""
        real = str(path)
        if within(real, self.workspace):
            return True
        return any(within(real, p.path) for p in self.places if p.writable or not writing)

    def root_for(self, path: Path | str, *, writing: bool) -> Path | None:
        """The allowed directory that holds `path` (where a descriptor walk to it starts),
        or None when the path is outside the boundary."""
        real = str(path)
        if self.check(real, writing=writing) is not None:
            return None
        roots = self.writable_roots() if writing else self.readable_roots()
        root = self._root_in(real, roots)
        if root is None and not writing:
            root = self._root_in(real, self.system_dirs)
        if root is None:
            return Path(Path(real).anchor)
        if root == real and not os.path.isdir(real):
            return Path(real).parent  # a place that is one file (/etc/passwd): walk to it
        return Path(root)

    def _kept_in(self, path: str) -> Place | None:
        return next((p for p in self.places if p.kept and within(path, p.path)), None)

    @staticmethod
    def _root_in(path: str, roots: Iterable[str]) -> str | None:
        """The longest root that holds `path` (the walk from it is the shortest)."""
        best = None
        for root in roots:
            if within(path, root) and (best is None or len(root) > len(best)):
                best = root
        return best

    def _outside_why(self, real: str, *, writing: bool, own: bool = False) -> str:
        if own:
            return (
                f"{real} is agentcli's own configuration and data; a tool reads it only "
                "with your approval of that one call, in a terminal"
            )
        directory = real if os.path.isdir(real) else os.path.dirname(real) or "/"
        if writing:
            where = "the workspace and the places added with --add-dir"
            how = f"--add-dir {directory}"
        else:
            where = "the workspace, the system directories and the places added with --add-dir"
            how = f"--add-dir {directory}:ro"
        return (
            f"{real} is outside {where}; to let tools reach it, run with {how} (in a chat: "
            f"/{how.removeprefix('--')})"
        )

    def describe(self) -> list[str]:
        """For `doctor`: what tools and commands may reach besides the system."""
        lines = [f"workspace {self.workspace} (read-write)"]
        lines += [
            f"{p.kept or 'added'} {p.path} ({'read-write' if p.writable else 'read-only'})"
            for p in self.places
        ]
        if not self.enforced:
            lines.append("the sandbox is off: tools reach everything but agentcli's own files")
        return lines
