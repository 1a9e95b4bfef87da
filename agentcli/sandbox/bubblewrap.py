"""The bubblewrap command line for a layout: a new mount namespace holding only the paths
the layout lists (your home directory is not in it), the protected paths bound read-only
over the writable workspace, a private /tmp, a /proc of a new PID namespace (agentcli and
every other process of yours are not in it), no network unless the profile has it, and
the whole namespace killed when agentcli dies."""

from __future__ import annotations

from agentcli.sandbox.layout import Layout


def bwrap_argv(bwrap: str, layout: Layout, cwd: str) -> list[str]:
    argv = [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--new-session", "--proc", "/proc",
            "--dev", "/dev"]  # fmt: skip
    if not layout.network:
        argv.append("--unshare-net")
    argv += ["--tmpfs", "/tmp"]  # first: the binds below may lie under /tmp
    writable = set(layout.write)
    # /etc is bound whole (one mount, not two hundred); Landlock inside the namespace still
    # keeps its secret files (shadow, SSH host keys) unreadable.
    argv += ["--ro-bind", "/etc", "/etc"]
    for path in layout.read:
        if path == "/proc" or path in writable or path.startswith("/etc/"):
            continue
        argv += ["--ro-bind-try", path, path]
    # /dev comes from --dev (null, zero, full, random, urandom, tty, pts, shm)
    for path in layout.write:
        argv += ["--bind", path, path]
    for path in layout.protected:
        argv += ["--ro-bind", path, path]
    argv += ["--chdir", cwd, "--setenv", "TMPDIR", layout.temp]
    return argv
