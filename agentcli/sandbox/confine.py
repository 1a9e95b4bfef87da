"""One session's sandbox: which mechanism confines commands on this host, the private
temp directory they share, and the command line that runs one command in one profile.

`Sandbox.confine` turns a command into the command that runs it confined, plus what to do
after it ends (read how many processes the keeper had to kill, put protected paths back)."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.records import dataclass, field
from agentcli.risk import Risk
from agentcli.sandbox import guard
from agentcli.sandbox.layout import Layout, build_layout, protected_paths
from agentcli.sandbox.profiles import EARNED, Profile

if TYPE_CHECKING:
    from agentcli.sandbox.mechanisms import Mechanisms

BACKENDS = ("auto", "bubblewrap", "landlock", "seatbelt")


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    enabled: bool = True  # False: `--sandbox none` or `sandbox.mode = "off"`
    allow_network: bool = False  # what --yes may grant: --allow-network or sandbox.network
    extra_read: tuple[str, ...] = ()
    extra_write: tuple[str, ...] = ()
    backend: str = "auto"


def sandbox_settings(config, flag: str | None, allow_network: bool) -> SandboxSettings:
    """From `--sandbox` / `--allow-network` and the `[sandbox]` table (which an untrusted
    workspace's file cannot set: the keys are marked dangerous)."""
    from agentcli.errors import ConfigError

    mode = config.get("sandbox.mode")
    if mode not in ("auto", "off"):
        raise ConfigError(f'sandbox.mode must be "auto" or "off", not {mode!r}')
    backend = config.get("sandbox.backend")
    if backend not in BACKENDS:
        raise ConfigError(f"sandbox.backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    enabled = flag != "none" if flag is not None else mode == "auto"
    expand = os.path.expanduser
    return SandboxSettings(
        enabled=enabled,
        allow_network=allow_network or bool(config.get("sandbox.network")),
        extra_read=tuple(os.path.realpath(expand(p)) for p in config.get("sandbox.read")),
        extra_write=tuple(os.path.realpath(expand(p)) for p in config.get("sandbox.write")),
        backend=backend,
    )


@dataclass(slots=True)
class Confined:
    """A command ready to start confined, and its clean-up."""

    argv: list[str]
    env: dict[str, str]
    profile: Profile
    pass_fds: tuple[int, ...] = ()
    status_fd: int | None = None  # read end: the keeper writes "EXIT LEFTOVERS"
    watched: guard.Snapshot | None = None
    restored: list[str] = field(default_factory=list)

    @property
    def kept(self) -> bool:
        """A keeper (the launcher) owns the tree: it reports and kills what is left."""
        return self.status_fd is not None

    def leftovers(self) -> int | None:
        """How many processes the keeper killed after the command's main process ended."""
        if self.status_fd is None:
            return None
        try:
            data = os.read(self.status_fd, 128).split()
        except OSError:
            data = []
        finally:
            os.close(self.status_fd)
            self.status_fd = None
        return int(data[1]) if len(data) == 2 and data[1].isdigit() else None

    def finish(self) -> list[str]:
        """After the command: protected paths it changed, now put back."""
        if self.status_fd is not None:
            os.close(self.status_fd)
            self.status_fd = None
        if self.watched is not None:
            self.restored = guard.restore(self.watched)
            self.watched = None
        return self.restored


LAUNCHER = Path(__file__).parent / "launcher.py"
# What `python -c` runs: read the compiled launcher from a pipe and run it. Compiling the
# launcher's source at every start would cost more than the rest of it, and a compiled file
# on disk could be rewritten by a sandboxed command before the next launcher (which runs
# before it confines itself) reads it; a pipe filled by agentcli cannot.
BOOTSTRAP = (
    "import marshal, os\n"
    "code = b''\n"
    "while chunk := os.read({fd}, 65536):\n"
    "    code += chunk\n"
    "os.close({fd})\n"
    "exec(marshal.loads(code))\n"
)


@functools.cache
def compiled_launcher() -> bytes:
    import marshal

    source = LAUNCHER.read_text(encoding="utf-8")
    return marshal.dumps(compile(source, str(LAUNCHER), "exec"))


def launcher_pipe() -> int:
    """A pipe holding the compiled launcher, whole; returns its read end."""
    return _pipe_holding(compiled_launcher())


def _pipe_holding(data: bytes) -> int:
    """A pipe that holds `data` and is closed for writing; returns its read end."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, data)  # far below a pipe's capacity: never blocks
    finally:
        os.close(write_end)
    os.set_inheritable(read_end, True)
    return read_end


class Sandbox:
    def __init__(
        self, workspace: Path, settings: SandboxSettings, mechanisms: Mechanisms | None = None
    ) -> None:
        self.workspace = str(workspace)
        self.settings = settings
        self._mechanisms = mechanisms
        self._temp: str | None = None

    @property
    def mechanisms(self) -> Mechanisms:
        if self._mechanisms is None:
            from agentcli.sandbox.mechanisms import detect  # ctypes and a probe: when needed

            self._mechanisms = detect()
        return self._mechanisms

    @property
    def backend(self) -> str | None:
        """The mechanism commands run under, or None when they run unconfined."""
        if not self.settings.enabled:
            return None
        found = self.mechanisms
        wanted = self.settings.backend
        if wanted == "auto":
            return found.backend
        available = {"bubblewrap": bool(found.bwrap), "landlock": bool(found.landlock_abi),
                     "seatbelt": bool(found.seatbelt)}  # fmt: skip
        return wanted if available.get(wanted) else None

    @property
    def active(self) -> bool:
        wanted = self.settings.backend
        if self._mechanisms is None and self.settings.enabled and wanted in ("auto", "landlock"):
            # Landlock alone (one system call) answers "is there a sandbox?" for both:
            # detect() would also start bubblewrap twice to probe it (`policy explain`).
            from agentcli.sandbox.mechanisms import landlock_abi

            if landlock_abi()[0] > 0:
                return True
        return self.backend is not None

    def profile_for(self, risk: Risk, requested: str | None = None) -> Profile:
        """What a call runs in: what its risk earns, or what it asked for if that is
        more (the asking was already part of its risk); none without a sandbox."""
        if not self.active:
            return Profile.NONE
        earned = EARNED[risk]
        if requested:
            asked = Profile(requested)
            if asked.rank > earned.rank or asked is Profile.READ_ONLY:
                return asked
        return earned

    @property
    def temp(self) -> str:
        if self._temp is None:
            import tempfile  # here: `policy explain` never makes one

            self._temp = tempfile.mkdtemp(prefix="agentcli-sandbox-")
        return self._temp

    def layout(
        self, profile: Profile, env: dict[str, str], executables: Sequence[str] = ()
    ) -> Layout:
        return build_layout(
            profile,
            self.workspace,
            self.temp,
            path_variable=env.get("PATH", ""),
            home=env.get("HOME", ""),
            executables=[*executables, sys.executable],
            extra_read=self.settings.extra_read,
            extra_write=self.settings.extra_write,
        )

    def confine(
        self,
        argv: Sequence[str],
        profile: Profile,
        *,
        cwd: str,
        env: dict[str, str],
        executables: Sequence[str] = (),
    ) -> Confined:
        backend = self.backend
        if backend is None or profile is Profile.NONE:
            return Confined(list(argv), dict(env), Profile.NONE)
        if "/" not in argv[0]:  # found on the child's PATH here, as an unconfined start would
            import shutil  # here, as tempfile is: `policy explain` needs neither

            found = shutil.which(argv[0], path=env.get("PATH", os.defpath))
            if found is None:
                raise FileNotFoundError(2, "No such file or directory", argv[0])
            argv = [found, *argv[1:]]
        layout = self.layout(profile, env, executables)
        env = {**env, "TMPDIR": layout.temp}
        watched = None
        if layout.write != (layout.temp,):
            watched = guard.take(protected_paths(self.workspace, existing_only=False))
        if backend == "seatbelt":
            from agentcli.sandbox.seatbelt import seatbelt_argv

            assert self.mechanisms.seatbelt is not None
            command = [*seatbelt_argv(self.mechanisms.seatbelt, layout), *argv]
            return Confined(command, env, profile, watched=watched)
        if backend == "bubblewrap":
            return self._under_bubblewrap(argv, profile, layout, cwd, env, watched)
        read_end, write_end = os.pipe()
        os.set_inheritable(write_end, True)
        os.set_blocking(read_end, False)  # read once the keeper is gone, whatever it wrote
        words = self._launcher_words(layout, write_end)
        python = os.path.realpath(sys.executable)
        code = launcher_pipe()
        bootstrap = BOOTSTRAP.format(fd=code)
        keeper_argv = [python, "-I", "-S", "-c", bootstrap, *words, "--", *argv]
        return Confined(keeper_argv, env, profile, (write_end, code), read_end, watched)

    def _under_bubblewrap(
        self,
        argv: Sequence[str],
        profile: Profile,
        layout: Layout,
        cwd: str,
        env: dict[str, str],
        watched: guard.Snapshot | None,
    ) -> Confined:
        """bubblewrap alone: its PID namespace contains the tree (it dies with agentcli and
        with the command's main process), it drops the capabilities and installs the socket
        filter, so no keeper is started (a Python start per command saved)."""
        from agentcli.sandbox.bubblewrap import bwrap_argv

        assert self.mechanisms.bwrap is not None
        fds: tuple[int, ...] = ()
        seccomp_fd = None
        if not layout.network and self.mechanisms.seccomp:
            from agentcli.sandbox.launcher import seccomp_program

            program = seccomp_program(os.uname().machine)
            if program is not None:
                seccomp_fd = _pipe_holding(program)
                fds = (seccomp_fd,)
        command = [*bwrap_argv(self.mechanisms.bwrap, layout, cwd, seccomp_fd), *argv]
        return Confined(command, env, profile, fds, None, watched)

    def _launcher_words(self, layout: Layout, status_fd: int) -> list[str]:
        words = [f"status_fd={status_fd}", f"parent={os.getpid()}"]
        if self.mechanisms.landlock_abi:
            words += [f"read={p}" for p in layout.read]
            words += [f"write={p}" for p in layout.write]
            words += [f"device={p}" for p in layout.devices]
        else:
            words.append("landlock=0")
        if layout.network:
            words.append("network=1")
        if not self.mechanisms.seccomp:
            words.append("seccomp=0")
        return words

    def close(self) -> None:
        if self._temp is not None:
            import shutil

            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None
