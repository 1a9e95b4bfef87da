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
from agentcli.sandbox.boundary import Boundary, Place, PlaceError, parse_place, within
from agentcli.sandbox.guard import Guard
from agentcli.sandbox.layout import Layout, build_layout
from agentcli.sandbox.profiles import EARNED, WRITES, Profile
from agentcli.sandbox.protected import Gap

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
    places: tuple[Place, ...] = ()  # --add-dir and sandbox.add_dirs: for every tool


def added_places(config, add_dirs: Sequence[str] = ()) -> tuple[Place, ...]:
    """The places a person named: `sandbox.add_dirs` (a workspace's file cannot set it
    until trusted) and `--add-dir`, each `DIR` (read-write) or `DIR:ro`."""
    from agentcli.errors import ConfigError, UsageError

    places: list[Place] = []
    for text in config.get("sandbox.add_dirs"):
        try:
            places.append(parse_place(str(text)))
        except PlaceError as error:
            where = config.source("sandbox.add_dirs")
            raise ConfigError(f"sandbox.add_dirs: {error} (in {where})") from None
    for text in add_dirs:
        try:
            places.append(parse_place(text))
        except PlaceError as error:
            raise UsageError(f"--add-dir {text}: {error}") from None
    return tuple(dict.fromkeys(places))


def sandbox_settings(
    config, flag: str | None, allow_network: bool, add_dirs: Sequence[str] = ()
) -> SandboxSettings:
    """From `--sandbox` / `--allow-network` / `--add-dir` and the `[sandbox]` table (which
    an untrusted workspace's file cannot set: the keys are marked dangerous)."""
    from agentcli.errors import ConfigError

    mode = config.get("sandbox.mode")
    if mode not in ("auto", "off"):
        raise ConfigError(f'sandbox.mode must be "auto" or "off", not {mode!r}')
    backend = config.get("sandbox.backend")
    if backend not in BACKENDS:
        raise ConfigError(f"sandbox.backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    enabled = flag != "none" if flag is not None else mode == "auto"
    return SandboxSettings(
        enabled=enabled,
        allow_network=allow_network or bool(config.get("sandbox.network")),
        extra_read=_extra_paths(config, "sandbox.read"),
        extra_write=_extra_paths(config, "sandbox.write"),
        backend=backend,
        places=added_places(config, add_dirs),
    )


def _extra_paths(config, key: str) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    """`sandbox.read` / `sandbox.write`, resolved; none may hold agentcli's own files."""
    from agentcli.errors import ConfigError
    from agentcli.sandbox.boundary import own_directories, within

    paths = tuple(os.path.realpath(os.path.expanduser(p)) for p in config.get(key))
    for path in paths:
        for own in own_directories():
            if within(own, path) or within(path, own):
                raise ConfigError(
                    f"{key}: {path} holds agentcli's own configuration or data ({own}), which "
                    f"no command may reach; name a place beside it (in {config.source(key)})"
                )
    return paths


def _named_places(argv: Sequence[str], cwd: str, env: dict[str, str]) -> list[Place]:
    """Read-only places for the existing files a server's command line names: its script's
    directory (`node ~/tools/srv/index.js`), a directory given whole."""
    from agentcli.sandbox.boundary import own_directories
    from agentcli.sandbox.layout import exposable, secret_places

    home = env.get("HOME", "")
    secrets = secret_places(home, own_directories())
    places = []
    for word in argv:
        path = os.path.realpath(os.path.join(cwd, os.path.expanduser(word)))
        if not os.path.exists(path) or path == "/":
            continue
        directory = path if os.path.isdir(path) else os.path.dirname(path)
        if exposable(directory, home, secrets):
            places.append(Place(directory, False))
    return places


def session_sandbox(settings, places: Sequence[Place] = ()) -> Sandbox:  # type: ignore[no-untyped-def]
    """The sandbox of one session (agentcli.settings.RunSettings): its flags and its
    configuration's `[sandbox]` table; `places`: what agentcli adds (skills' folders)."""
    chosen = sandbox_settings(
        settings.config, settings.sandbox, settings.allow_network, settings.add_dirs
    )
    if places:
        from agentcli.records import replace

        chosen = replace(chosen, places=tuple(dict.fromkeys((*chosen.places, *places))))
    return Sandbox(settings.workspace, chosen)


def overlaps(path: str, directory: str) -> bool:
    """Whether two directories overlap: one holds the other."""
    real = os.path.realpath(directory)
    return within(path, real) or within(real, path)


@dataclass(frozen=True, slots=True)
class ConfinedServer:
    """A server's command line in the sandbox, its environment, the guard to end when it
    stops, and the layout it runs in (what it reaches: agentcli.mcp.reach explains from
    it why a call failed)."""

    argv: list[str]
    env: dict[str, str]
    guard: Guard | None
    layout: Layout | None


@dataclass(slots=True)
class Confined:
    """A command ready to start confined, and its clean-up."""

    argv: list[str]
    env: dict[str, str]
    profile: Profile
    pass_fds: tuple[int, ...] = ()
    status_fd: int | None = None  # read end: the keeper writes "EXIT LEFTOVERS"
    guard: Guard | None = None  # the workspace's protected paths, checked when it ends
    restored: list[str] = field(default_factory=list)
    # bubblewrap's PID namespace holds the tree: every process of it descends from the
    # command's root, and all of them end with it.
    pid_namespace: bool = False

    @property
    def kept(self) -> bool:
        """A keeper (the launcher) owns the tree: it reports and kills what is left."""
        return self.status_fd is not None

    @property
    def contains_tree(self) -> bool:
        """Every process of the command's tree descends from its root: none is looked for
        elsewhere (by the marker in its environment)."""
        return self.kept or self.pid_namespace

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
        """After the command (and every process of it): protected paths it changed, now
        put back. Once only."""
        if self.status_fd is not None:
            os.close(self.status_fd)
            self.status_fd = None
        if self.guard is not None:
            self.restored = self.guard.end()
            self.guard = None
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
        self._guard: Guard | None = None
        self._git_config: str | None = None

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
        available = {
            "bubblewrap": bool(found.bwrap),
            "landlock": bool(found.landlock_abi),
            "seatbelt": bool(found.seatbelt),
        }
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

    @property
    def hides_processes(self) -> bool:
        """Commands get a process list of their own (a PID namespace: bubblewrap)."""
        return self.backend == "bubblewrap"

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
    def guard(self) -> Guard:
        """The workspace's protected paths, one keeper of them for the whole session. Where
        the sandbox mounts them read-only, it keeps no copy of their contents."""
        if self._guard is None:
            mounts = self.backend in ("bubblewrap", "seatbelt")
            self._guard = Guard(self.workspace, mounts=mounts)
        return self._guard

    def protection_gap(self, profile: Profile | str) -> Gap | None:
        """Why a command in `profile` could change a protected path for good here (the
        guard could not keep all of them: agentcli.sandbox.guard); None when it cannot,
        or when the profile does not write the workspace."""
        if Profile(profile) not in WRITES or self.backend is None:
            return None
        return self.guard.gap()

    def _watch(self, profile: Profile) -> Guard | None:
        """The guard, watching from now on, for a command that may write the workspace."""
        if profile not in WRITES:
            return None
        self.guard.begin()
        return self.guard

    def accept_write(self, path: Path | str) -> None:
        """agentcli wrote a path a person approved: a protected one keeps its new state."""
        if self._guard is not None:
            self._guard.accept(str(path))

    @property
    def temp(self) -> str:
        if self._temp is None:
            import tempfile  # here: `policy explain` never makes one

            self._temp = tempfile.mkdtemp(prefix="agentcli-sandbox-")
        return self._temp

    def layout(
        self,
        profile: Profile,
        env: dict[str, str],
        executables: Sequence[str] = (),
        temp: str | None = None,
        extra: Sequence[Place] = (),
        guard: Guard | None = None,
        always_write: Sequence[str] = (),
    ) -> Layout:
        """`guard`: watching the protected paths (after `begin`), which the layout then
        keeps read-only and in place; `always_write`: written in every profile (a
        server's own `dirs`, outside the workspace)."""
        from agentcli.sandbox.boundary import own_directories

        places = (*self.settings.places, *extra)
        protected, pinned = guard.protected() if guard is not None else ([], [])
        return build_layout(
            profile,
            self.workspace,
            temp or self.temp,
            path_variable=env.get("PATH", ""),
            home=env.get("HOME", ""),
            executables=[*executables, sys.executable],
            extra_read=[*self.settings.extra_read, *(p.path for p in places if not p.writable)],
            extra_write=[*self.settings.extra_write, *(p.path for p in places if p.writable)],
            own=own_directories(),
            protected=protected,
            pinned=pinned,
            always_write=always_write,
        )

    def git_identity(self, env: dict[str, str]) -> str:
        """A git configuration for commands (GIT_CONFIG_GLOBAL), in the sandbox's temp
        directory: the user's name and email and the few settings git needs to work, never
        their credential helpers, tokens or URL rewrites (agentcli.sandbox.git_identity)."""
        if self._git_config is None:
            from agentcli.sandbox.git_identity import write_identity

            self._git_config = write_identity(os.path.join(self.temp, "gitconfig"), env)
        return self._git_config

    def boundary(self, env: dict[str, str], outputs: Path | None = None) -> Boundary:
        """What every tool may reach: this sandbox's workspace-write layout (the system
        directories commands read, found when first needed) and the places added."""

        def places() -> tuple[Place, ...]:  # as they are at each check: /add-dir adds one
            settings = self.settings
            return (
                *settings.places,
                *(Place(p, False) for p in settings.extra_read),
                *(Place(p, True) for p in settings.extra_write),
            )

        def system() -> tuple[str, ...]:
            layout = self.layout(Profile.WORKSPACE_WRITE, env, temp="/nonexistent")
            return layout.read

        return Boundary(
            self.workspace,
            places,
            enforced=self.settings.enabled,
            system=system,
            temp=lambda: self._temp,
            outputs=outputs,
        )

    def add_place(self, place: Place) -> Place | None:
        """A place a person adds mid-session (the REPL's /add-dir): every tool's boundary and
        every command's layout have it from their next call on. It takes the place of one
        they added at the same path (`DIR:ro` after `DIR`); returns that one, if any."""
        from agentcli.records import replace

        old = next((p for p in self.settings.places if p.path == place.path and not p.kept), None)
        kept = tuple(p for p in self.settings.places if p is not old)
        self.settings = replace(self.settings, places=(*kept, place))
        return old

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
        watched = self._watch(profile)
        try:
            layout = self.layout(profile, env, executables, guard=watched)
            env = {**env, "TMPDIR": layout.temp, "GIT_CONFIG_GLOBAL": self.git_identity(env)}
        except BaseException:
            if watched is not None:
                watched.end()
            raise
        if backend == "seatbelt":
            from agentcli.sandbox.seatbelt import seatbelt_argv

            assert self.mechanisms.seatbelt is not None
            command = [*seatbelt_argv(self.mechanisms.seatbelt, layout), *argv]
            return Confined(command, env, profile, guard=watched)
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
        watched: Guard | None,
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
        return Confined(command, env, profile, fds, None, watched, pid_namespace=True)

    def confine_server(
        self,
        argv: Sequence[str],
        profile: Profile,
        *,
        cwd: str,
        env: dict[str, str],
        places: Sequence[Place] = (),
    ) -> ConfinedServer:
        """A long-running server's command line (an MCP stdio server), needing no inherited
        descriptor — the SDK that starts it passes none: the keeper's code is given whole in
        its command line, and under bubblewrap the keeper runs inside only to install the
        socket filter. The server may also read the files its command line names (its
        script, its install), never the home directory or a place of secrets. `places`
        are the server's own (its `dirs`): one named read-write is written even in the
        read-only profile, as long as it is outside the workspace (whose protected paths
        are watched only where the profile writes it). Returns the command line, its
        environment, the guard to end when the server stops (None when it cannot write
        the workspace) and the layout it runs in (None: unconfined)."""
        backend = self.backend
        if backend is None or profile is Profile.NONE:
            return ConfinedServer(list(argv), dict(env), None, None)
        for place in places:
            if place.writable and profile not in WRITES and overlaps(place.path, self.workspace):
                raise ValueError(
                    f"{place.path} overlaps the workspace, which the {profile} profile does not "
                    f'write: name it DIR:ro, or choose sandbox = "workspace-write"'
                )
        import shutil

        found = shutil.which(argv[0], path=env.get("PATH", os.defpath))
        if found is None:
            raise FileNotFoundError(2, "No such file or directory", argv[0])
        argv = [found, *argv[1:]]
        named = _named_places(argv, cwd, env)
        watched = self._watch(profile)
        try:
            layout = self.layout(
                profile,
                env,
                [found],
                extra=[*places, *named],
                guard=watched,
                always_write=[p.path for p in places if p.writable],
            )
            env = {**env, "TMPDIR": layout.temp, "GIT_CONFIG_GLOBAL": self.git_identity(env)}
        except BaseException:
            if watched is not None:
                watched.end()
            raise
        keeper = [os.path.realpath(sys.executable), "-I", "-S", "-c", LAUNCHER.read_text()]
        if backend == "seatbelt":
            from agentcli.sandbox.seatbelt import seatbelt_argv

            assert self.mechanisms.seatbelt is not None
            command = [*seatbelt_argv(self.mechanisms.seatbelt, layout), *argv]
            return ConfinedServer(command, env, watched, layout)
        if backend == "bubblewrap":
            from agentcli.sandbox.bubblewrap import bwrap_argv

            assert self.mechanisms.bwrap is not None
            inside = ["landlock=0", *(["network=1"] if layout.network else [])]
            command = [*bwrap_argv(self.mechanisms.bwrap, layout, cwd), *keeper, *inside, "--"]
            return ConfinedServer([*command, *argv], env, watched, layout)
        command = [*keeper, *self._launcher_words(layout, None), "--", *argv]
        return ConfinedServer(command, env, watched, layout)

    def _launcher_words(self, layout: Layout, status_fd: int | None) -> list[str]:
        words = [f"parent={os.getpid()}"]
        if status_fd is not None:
            words.append(f"status_fd={status_fd}")
        if self.mechanisms.landlock_abi:
            words.append(f"abi={self.mechanisms.landlock_abi}")  # the keeper's is agentcli's
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
        self._git_config = None
        if self._guard is not None:
            self._guard.close()
            self._guard = None
        if self._temp is not None:
            import shutil

            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None
