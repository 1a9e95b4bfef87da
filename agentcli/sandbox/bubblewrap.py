"""The bubblewrap command line for a layout: a new mount namespace holding only the paths
the layout lists (your home directory is not in it; /etc's secret files are masked), the
protected paths bound read-only over the writable workspace, a private /tmp, a /proc of a
new PID namespace (agentcli and every other process of yours are not in it), no network
unless the profile has it, every capability dropped, the seccomp filter on sockets, and the
whole namespace killed when agentcli dies or the command's main process ends.

bubblewrap does all of the keeper's work here, so no keeper process is started under it."""

from __future__ import annotations

import os

from agentcli.sandbox.layout import ETC_PARTLY, ETC_SECRETS, Layout


def etc_masks(etc: str = "/etc") -> list[str]:
    """Arguments that hide /etc's secret files inside the namespace (/etc is bound whole:
    one mount instead of two hundred)."""
    masks: list[str] = []
    for name in sorted(ETC_SECRETS):
        path = os.path.join(etc, name)
        if name in ETC_PARTLY and os.path.isdir(path):
            keep = ETC_PARTLY[name]
            try:
                hidden = [n for n in sorted(os.listdir(path)) if not keep(n)]
            except OSError:
                continue
            for entry in hidden:
                masks += _mask(os.path.join(path, entry))
        elif os.path.lexists(path):
            masks += _mask(path)
    return masks


def _mask(path: str) -> list[str]:
    if os.path.isdir(path) and not os.path.islink(path):
        return ["--tmpfs", path]
    return ["--ro-bind", "/dev/null", path]


def bwrap_argv(bwrap: str, layout: Layout, cwd: str, seccomp_fd: int | None = None) -> list[str]:
    argv = [
        bwrap,
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    if not layout.network:
        argv.append("--unshare-net")
    argv += ["--tmpfs", "/tmp"]  # first: the binds below may lie under /tmp
    argv += ["--ro-bind", "/etc", "/etc", *etc_masks()]
    writable = set(layout.write)
    for path in layout.read:
        if path == "/proc" or path in writable or path.startswith("/etc/"):
            continue
        argv += ["--ro-bind-try", path, path]
    # /dev comes from --dev (null, zero, full, random, urandom, tty, pts, shm)
    for path in layout.write:
        argv += ["--bind", path, path]
    for path in layout.pinned:  # a mount point cannot be renamed, removed or replaced
        argv += ["--bind", path, path]
    for path in layout.protected:
        argv += ["--ro-bind", path, path]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--chdir", cwd, "--setenv", "TMPDIR", layout.temp, "--"]
    return argv
