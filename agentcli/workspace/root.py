"""The workspace root that tools are confined to, and path resolution against it.

Paths are resolved with realpath (symlinks followed) and then compared by whole path
components, so `/w/proj-evil` is not inside `/w/proj` and a symlink pointing out is out.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.records import dataclass
from agentcli.text.decoding import os_path


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    requested: str
    path: Path  # absolute, symlinks resolved
    inside: bool  # within the workspace root

    @property
    def display(self) -> str:
        return self.requested


class Workspace:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.realpath(root))
        self._prefix = os.path.join(str(self.root), "")  # the root with one trailing separator

    def resolve(self, requested: str) -> ResolvedPath:
        expanded = os.path.expanduser(requested) if requested.startswith("~") else requested
        joined = os.path.join(self.root, expanded)  # an absolute `expanded` replaces the root
        if "\\x" in expanded and not os.path.lexists(joined):
            # A name as agentcli shows it, `\xHH` for each byte that is not UTF-8: the file
            # it was shown for (agentcli.text.decoding.os_path).
            joined = os_path(str(self.root), expanded)
        real = Path(os.path.realpath(joined))
        return ResolvedPath(requested=requested, path=real, inside=self.contains(real))

    def contains(self, real: Path) -> bool:
        """By whole components: `/w/proj-evil` is not in `/w/proj` (strings: it runs often)."""
        text = str(real)
        return text == str(self.root) or text.startswith(self._prefix)

    def relative(self, real: Path) -> str:
        """How to show a resolved path: relative inside the workspace, absolute outside."""
        if self.contains(real):
            return str(real.relative_to(self.root)) or "."
        return str(real)
