"""What this host can enforce: Landlock (and which ABI), seccomp, bubblewrap (installed and
able to create namespaces here), macOS Seatbelt. Found once per process, on first use."""

from __future__ import annotations

import functools
import os
import sys

from agentcli.records import dataclass

SECCOMP_ARCHES = ("x86_64", "aarch64")


@dataclass(frozen=True, slots=True)
class Mechanisms:
    system: str  # Linux, Darwin, ...
    landlock_abi: int  # 0: none
    landlock_note: str
    seccomp: bool
    bwrap: str | None  # the path of a bubblewrap that works here
    bwrap_version: str | None
    bwrap_note: str
    seatbelt: str | None  # the path of sandbox-exec

    @property
    def backend(self) -> str | None:
        """The strongest combination available: bubblewrap with Landlock inside it,
        Landlock alone, Seatbelt; None when nothing can confine a command here."""
        if self.bwrap:
            return "bubblewrap"
        if self.landlock_abi:
            return "landlock"
        if self.seatbelt:
            return "seatbelt"
        return None


def _system() -> str:
    """platform.system() without importing `platform` (which costs more than this call)."""
    return "Windows" if os.name == "nt" else os.uname().sysname


# Lowers the Landlock ABI agentcli uses (never raises it): what an older kernel gives can
# then be tried on a newer one (the tests of the keeper below ABI 6 do).
LOWER_ABI = "AGENTCLI_LANDLOCK_ABI"


@functools.cache
def landlock_abi() -> tuple[int, str]:
    if _system() != "Linux":
        return 0, "Landlock is a Linux feature"
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        abi = int(libc.syscall(444, None, ctypes.c_size_t(0), 1))
    except (OSError, AttributeError):
        return 0, "could not ask the kernel"
    if abi > 0:
        return _lowered(abi)
    errno = ctypes.get_errno()
    if errno == 38:  # ENOSYS
        return 0, "the kernel has no Landlock (Linux 5.13 or newer, built with it)"
    return 0, "Landlock is turned off (add landlock to the lsm= kernel parameter)"


def _lowered(abi: int) -> tuple[int, str]:
    """The kernel's ABI, or the lower one AGENTCLI_LANDLOCK_ABI asks for."""
    wanted = os.environ.get(LOWER_ABI, "").strip()
    if not wanted:
        return abi, f"ABI {abi}"
    if not wanted.isdigit() or not 1 <= int(wanted) <= abi:
        return abi, f"ABI {abi} ({LOWER_ABI}={wanted!r} ignored: not a number from 1 to {abi})"
    if int(wanted) == abi:
        return abi, f"ABI {abi}"
    return int(wanted), f"ABI {wanted}, lowered from {abi} by {LOWER_ABI}"


def find_bwrap() -> tuple[str | None, str | None, str]:
    import shutil
    import subprocess  # here: only a probe of bubblewrap starts a process

    path = shutil.which("bwrap")
    if path is None:
        return None, None, "not installed (apt install bubblewrap / dnf install bubblewrap)"
    try:
        version = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=5
        ).stdout.split()[-1]
        probe = subprocess.run(
            [
                path,
                "--ro-bind",
                "/",
                "/",
                "--unshare-pid",
                "--unshare-net",
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                "--die-with-parent",
                "true",
            ],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError, IndexError) as error:
        return None, None, f"does not run here: {error}"
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or ["unknown error"])[-1]
        return None, version, f"installed but cannot create namespaces here ({why})"
    return path, version, f"version {version}"


@functools.cache
def detect() -> Mechanisms:
    abi, note = landlock_abi()
    bwrap, version, bwrap_note = (None, None, "Linux only")
    if _system() == "Linux":
        bwrap, version, bwrap_note = find_bwrap()
    import shutil

    seatbelt = shutil.which("sandbox-exec") if sys.platform == "darwin" else None
    return Mechanisms(
        system=_system(),
        landlock_abi=abi,
        landlock_note=note,
        seccomp=_system() == "Linux" and os.uname().machine in SECCOMP_ARCHES,
        bwrap=bwrap,
        bwrap_version=version,
        bwrap_note=bwrap_note,
        seatbelt=seatbelt,
    )


# What each Landlock ABI below the newest agentcli uses leaves weaker when Landlock alone
# confines commands, and what stands in for it (agentcli.sandbox.launcher's filters).
WEAKER_BELOW = (
    (
        2,
        "renaming or linking a file into another directory fails (Landlock ABI 2 allows "
        "it inside the sandbox)",
    ),
    (
        3,
        "truncating a file by its path is not Landlock's to refuse before ABI 3; a seccomp "
        "filter refuses truncate(2) instead (a command that uses it fails)",
    ),
    (
        4,
        "TCP is not restricted by Landlock before ABI 4; outside the network profile the "
        "seccomp filter refuses every socket, in it nothing does",
    ),
    (5, "ioctl on the devices a command may open is not restricted before Landlock ABI 5"),
    (
        6,
        "signals and abstract Unix sockets are not scoped before Landlock ABI 6: a command "
        "may signal your other processes (a seccomp filter keeps agentcli and the command's "
        "keeper out of its reach, so nothing it starts outlives it), and in the network "
        "profile reach abstract sockets outside the sandbox",
    ),
)


def weaker_here(backend: str | None, abi: int) -> list[str]:
    """What is weaker on this host than on a kernel with Landlock ABI 6 or newer, for
    commands confined by Landlock alone (bubblewrap's namespaces do not depend on it)."""
    if backend != "landlock":
        return []
    return [said for below, said in WEAKER_BELOW if abi < below]
