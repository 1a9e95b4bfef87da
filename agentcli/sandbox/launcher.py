"""The sandbox launcher: a tiny program, standard library only, that agentcli runs as
`python -I -S -c SOURCE SPEC -- ARGV...` in place of a command. It drops every capability,
starts ARGV as its child confined (no new privileges, Landlock, a seccomp filter on
sockets) and stays outside that confinement as the tree's keeper:

- it is a child subreaper, so every process the command starts, even one that called
  setsid, double-forked or cleared its environment, is re-parented to it, never to init;
- it dies with agentcli (PR_SET_PDEATHSIG), even after a `kill -9` of agentcli, and
  whenever it is told to stop (SIGTERM, SIGINT, SIGHUP) or the command's main process ends,
  it kills every process left in the tree before it exits.

It is run with `-S -I` and imports nothing of agentcli (nor json or re: their imports cost
more than the rest), so that it starts in a few milliseconds and trusts nothing from the
environment. It confines the command, not itself: the command's child applies Landlock and
the seccomp filters before it runs, so that the keeper stands outside the command's domain.
Nothing inside can reach the keeper or agentcli: Landlock scopes signals from ABI 6, and on
every ABI a second seccomp filter refuses signals to either of them (and to every process,
`kill -1`) and any change to another process's limits (`prlimit --pid`: a keeper or an
agentcli left without file descriptors could neither kill the tree nor put protected paths
back). The command runs in a process group of its own, so that its `kill 0` is its own.

Its spec is a list of words before `--`: `read=PATH`, `write=PATH`, `device=PATH`,
`network=1`, `status_fd=N`, `parent=PID`, `grace=SECONDS`, `caps=keep`, `landlock=0`,
`seccomp=0`, and `abi=N`, the Landlock ABI agentcli uses (at most the kernel's; below it
only when AGENTCLI_LANDLOCK_ABI lowers it, to test what an older kernel gives). It reports
`EXIT LEFTOVERS` on the status descriptor."""

from __future__ import annotations

import _signal as signal  # the C module: `signal` imports enum, which costs more than all the rest
import ctypes
import os
import struct
import sys
import time

PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_RULE_PATH_BENEATH = 1

# Landlock filesystem rights, by the ABI that introduced them.
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
READ_RIGHTS = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
WRITE_RIGHTS = (
    FS_WRITE_FILE
    | FS_REMOVE_DIR
    | FS_REMOVE_FILE
    | FS_MAKE_DIR
    | FS_MAKE_REG
    | FS_MAKE_SOCK
    | FS_MAKE_FIFO
    | FS_MAKE_SYM
    | FS_REFER
    | FS_TRUNCATE
)
DEVICE_RIGHTS = FS_MAKE_CHAR | FS_MAKE_BLOCK | FS_IOCTL_DEV

# seccomp: which architecture, which syscall numbers.
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
SYS_SOCKET = {"x86_64": 41, "aarch64": 198}
SYS_IO_URING_SETUP = 425
# The calls that name another process to signal it or change its limits, by architecture:
# (kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, prlimit64).
SYS_OTHERS = {"x86_64": (62, 200, 234, 129, 297, 302), "aarch64": (129, 130, 131, 138, 240, 261)}
SYS_PIDFD_SEND_SIGNAL = 424  # the same everywhere
SYS_TRUNCATE = {"x86_64": 76, "aarch64": 45}  # by path: outside Landlock below ABI 3
X32_SYSCALL_BIT = 0x40000000
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
EACCES = 13
EPERM = 1
ENOSYS = 38
AF_UNIX = 1

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def _prctl(option: int, arg: int = 0) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), f"prctl({option})")


def landlock_abi(wanted: int | None = None) -> int:
    """The kernel's Landlock ABI, or `wanted` where that is lower."""
    result = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), 1)
    abi = int(result) if result > 0 else 0
    return min(abi, wanted) if wanted is not None and wanted > 0 else abi


def _fs_rights(abi: int) -> int:
    rights = READ_RIGHTS | WRITE_RIGHTS | DEVICE_RIGHTS
    if abi < 2:
        rights &= ~FS_REFER
    if abi < 3:
        rights &= ~FS_TRUNCATE
    if abi < 5:
        rights &= ~FS_IOCTL_DEV
    return rights


def apply_landlock(spec: dict, network: bool) -> int:
    """Everything the filesystem offers is denied but what the spec lists; TCP too when the
    spec has no network; signals and abstract sockets are scoped to the sandbox."""
    abi = landlock_abi(int(spec["abi"]) if spec.get("abi", "").isdigit() else None)
    if abi == 0:
        return 0  # the caller knows: doctor and the plan only pick Landlock where it is
    handled = _fs_rights(abi)
    net = 0 if network or abi < 4 else NET_BIND_TCP | NET_CONNECT_TCP
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    if abi >= 6:
        attr = struct.pack("QQQ", handled, net, scoped)
    elif abi >= 4:
        attr = struct.pack("QQ", handled, net)
    else:
        attr = struct.pack("Q", handled)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _check(
        _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), 0),
        "landlock_create_ruleset",
    )
    read = handled & (READ_RIGHTS)
    write = handled & (READ_RIGHTS | WRITE_RIGHTS)
    for paths, rights in (
        (spec["read"], read),
        (spec["write"], write),
        (spec["devices"], read | (handled & (FS_WRITE_FILE | FS_IOCTL_DEV))),
    ):
        for path in paths:
            _add_path_rule(ruleset, path, rights)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _check(_libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    os.close(ruleset)
    return abi


def _add_path_rule(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path that does not exist grants nothing
    try:
        if not os.path.isdir(f"/proc/self/fd/{fd}"):
            rights &= FILE_RIGHTS
        attr = struct.pack("=Qi", rights, fd)
        buf = ctypes.create_string_buffer(attr, len(attr))
        _check(
            _libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, buf, 0),
            f"landlock_add_rule({path})",
        )
    finally:
        os.close(fd)


def drop_capabilities() -> None:
    """Root keeps its uid but loses every capability: CAP_SYS_PTRACE would read agentcli's
    memory and environment, CAP_DAC_OVERRIDE any file, CAP_SYS_ADMIN would undo the rest."""
    last = 63
    while last >= 0:
        if _libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(last), 0, 0, 0) < 0:
            err = ctypes.get_errno()
            if err not in (22, 1):  # EINVAL: no such capability; EPERM: not ours to drop
                raise OSError(err, "prctl(PR_CAPBSET_DROP)")
        last -= 1
    _libc.prctl(PR_CAP_AMBIENT, ctypes.c_ulong(PR_CAP_AMBIENT_CLEAR_ALL), 0, 0, 0)
    header = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = b"\0" * 24  # two {effective, permitted, inheritable} triples, all empty
    hbuf = ctypes.create_string_buffer(header, len(header))
    dbuf = ctypes.create_string_buffer(data, len(data))
    _check(_libc.capset(hbuf, dbuf), "capset")


def seccomp_program(machine: str) -> bytes | None:
    """The filter, as the kernel (and bubblewrap's --seccomp) takes it: no sockets but local
    pairs (socket() of any family fails with EACCES; socketpair still works), no io_uring
    (which can open sockets behind seccomp's back), and no syscalls of another ABI (32-bit,
    x32), so that none of this can be side-stepped. None for an architecture it does not
    know."""
    arch = AUDIT_ARCH.get(machine)
    if arch is None:
        return None
    ld_abs, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    errno_eacces = SECCOMP_RET_ERRNO | EACCES
    program = [
        (ld_abs, 0, 0, 4),  # A = arch
        (jeq, 1, 0, arch),
        (ret, 0, 0, SECCOMP_RET_ERRNO | EPERM),
        (ld_abs, 0, 0, 0),  # A = nr
        (jge, 0, 1, X32_SYSCALL_BIT),
        (ret, 0, 0, SECCOMP_RET_ERRNO | EPERM),
        (jeq, 0, 1, SYS_SOCKET[machine]),
        (ret, 0, 0, errno_eacces),
        (jeq, 0, 1, SYS_IO_URING_SETUP),
        (ret, 0, 0, SECCOMP_RET_ERRNO | EPERM),
        (ret, 0, 0, SECCOMP_RET_ALLOW),
    ]
    return b"".join(struct.pack("HBBI", *insn) for insn in program)


def _assemble(program: list[tuple]) -> bytes:
    """BPF instructions, whose jump targets may be labels: ("label", NAME) marks one."""
    where: dict[str, int] = {}
    position = 0
    for item in program:
        if item[0] == "label":
            where[item[1]] = position
        else:
            position += 1
    out = []
    position = 0
    for item in program:
        if item[0] == "label":
            continue
        code, jt, jf, k = item
        jt = where[jt] - position - 1 if isinstance(jt, str) else jt
        jf = where[jf] - position - 1 if isinstance(jf, str) else jf
        out.append(struct.pack("HBBI", code, jt, jf, k & 0xFFFFFFFF))
        position += 1
    return b"".join(out)


def others_program(machine: str, keeper: int, agent: int, agent_group: int) -> bytes | None:
    """The filter that keeps the keeper and agentcli out of the command's reach: no signal
    to either (by process, thread or group) nor to every process at once (`kill -1`), no
    pidfd signal at all (ENOSYS: callers fall back to kill, which this filter sees), and
    no limit of any other process changed (prlimit with a pid). Process ids are compared
    as the kernel reads them, as 32-bit words. None for an architecture it does not know."""
    arch, calls = AUDIT_ARCH.get(machine), SYS_OTHERS.get(machine)
    if arch is None or calls is None:
        return None
    kill, tkill, tgkill, sigqueue, tgsigqueue, prlimit = calls
    ld_abs, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    ours = [p for p in (keeper, agent) if p > 0]
    groups = [-p for p in (keeper, agent_group) if p > 0]
    program: list[tuple] = [
        (ld_abs, 0, 0, 4),
        (jeq, 1, 0, arch),
        (ret, 0, 0, SECCOMP_RET_ERRNO | EPERM),
        (ld_abs, 0, 0, 0),
        (jge, "deny", 0, X32_SYSCALL_BIT),
        (jeq, "nosys", 0, SYS_PIDFD_SEND_SIGNAL),
    ]
    checks = (
        (kill, (0,), [*ours, *groups, -1]),
        (tkill, (0,), ours),
        (tgkill, (0, 1), ours),
        (sigqueue, (0,), ours),
        (tgsigqueue, (0, 1), ours),
    )
    for number, args, refused in checks:
        after = f"after-{number}"
        program += [(ld_abs, 0, 0, 0), (jeq, 0, after, number)]
        for arg in args:
            program.append((ld_abs, 0, 0, 16 + 8 * arg))  # the low word (little-endian)
            program += [(jeq, "deny", 0, pid) for pid in refused]
        program += [(ret, 0, 0, SECCOMP_RET_ALLOW), ("label", after)]
    program += [
        (ld_abs, 0, 0, 0),
        (jeq, 0, "allow", prlimit),
        (ld_abs, 0, 0, 16),
        (jeq, "allow", "deny", 0),  # its own limits (pid 0) only
        ("label", "allow"),
        (ret, 0, 0, SECCOMP_RET_ALLOW),
        ("label", "deny"),
        (ret, 0, 0, SECCOMP_RET_ERRNO | EPERM),
        ("label", "nosys"),
        (ret, 0, 0, SECCOMP_RET_ERRNO | ENOSYS),
    ]
    return _assemble(program)


def truncate_program(machine: str) -> bytes | None:
    """Below Landlock ABI 3, truncate(2) by path is not Landlock's to refuse, so a command
    could empty any file it may only read (root's files, as root): refused here. Opening
    with O_TRUNC, or ftruncate(2), needs a file opened for writing, which Landlock governs."""
    arch, number = AUDIT_ARCH.get(machine), SYS_TRUNCATE.get(machine)
    if arch is None or number is None:
        return None
    ld_abs, jeq, ret = 0x20, 0x15, 0x06
    program = [
        (ld_abs, 0, 0, 4),
        (jeq, 1, 0, arch),
        (ret, 0, 0, SECCOMP_RET_ERRNO | EPERM),
        (ld_abs, 0, 0, 0),
        (jeq, 0, 1, number),
        (ret, 0, 0, SECCOMP_RET_ERRNO | EPERM),
        (ret, 0, 0, SECCOMP_RET_ALLOW),
    ]
    return _assemble(program)


def install_filter(filters: bytes) -> None:
    fbuf = ctypes.create_string_buffer(filters, len(filters))
    prog = struct.pack("HxxxxxxP", len(filters) // 8, ctypes.addressof(fbuf))
    pbuf = ctypes.create_string_buffer(prog, len(prog))
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _check(
        _libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), pbuf, 0, 0),
        "prctl(PR_SET_SECCOMP)",
    )


def apply_seccomp(machine: str) -> bool:
    filters = seccomp_program(machine)
    if filters is None:
        return False
    install_filter(filters)
    return True


def _children(pid: int) -> list[int]:
    """A process's children, from /proc/PID/task/*/children (no scan of every process)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                found.extend(int(word) for word in handle.read().split())
        except OSError:
            continue
    return found


def descendants(root: int) -> list[int]:
    """Every process below `root`. The keeper is a subreaper, so whatever a command left
    behind (setsid, double fork) is re-parented to it and found here."""
    found: list[int] = []
    frontier = [root]
    while frontier:
        kids = _children(frontier.pop())
        found.extend(kids)
        frontier.extend(kids)
    return found


def kill_tree(me: int) -> int:
    """SIGKILL every descendant until none is left; returns how many were killed."""
    killed: set[int] = set()
    for _ in range(50):
        pids = descendants(me)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        _reap_all()
        time.sleep(0.002)
    _reap_all()
    return len(killed)


def _reap_all() -> dict[int, int]:
    statuses = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        statuses[pid] = status
    return statuses


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _report(fd: int, code: int, leftovers: int) -> None:
    if fd < 0:
        return
    try:
        os.write(fd, f"{code} {leftovers}\n".encode())
        os.close(fd)
    except OSError:
        pass


def supervise(child: int, status_fd: int, grace: float) -> int:
    """Waits for the command. When it ends, or when agentcli says stop (SIGTERM, SIGINT,
    SIGHUP, or agentcli's death), the whole tree goes: SIGTERM, `grace` seconds, SIGKILL."""
    stopped_by = [0]

    def finish(code: int) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        left = kill_tree(os.getpid())
        _report(status_fd, code, left)
        os._exit(code)

    def on_alarm(signum: int, frame: object) -> None:
        finish(128 + stopped_by[0])

    def on_stop(signum: int, frame: object) -> None:
        if stopped_by[0]:
            return
        stopped_by[0] = signum
        for pid in descendants(os.getpid()):
            try:  # noqa: SIM105 - contextlib would cost the launcher an import
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, grace)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_stop)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            finish(128 + (stopped_by[0] or signal.SIGKILL))
            return 1  # not reached
        if pid == child:
            finish(_exit_code(status))


def parse_spec(words: list[str]) -> dict:
    spec: dict = {"read": [], "write": [], "devices": []}
    lists = {"read": "read", "write": "write", "device": "devices"}
    for word in words:
        key, _, value = word.partition("=")
        if key in lists:
            spec[lists[key]].append(value)
        else:
            spec[key] = value
    return spec


def confine(spec: dict, network: bool, keeper: int) -> None:
    """The command's own confinement, applied in the child just before it runs: the keeper
    stays outside the Landlock domain and out of the command's reach (the filter on other
    processes), so nothing the command starts can outlive it."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the keeper gone, the command goes with it
    os.setpgid(0, 0)  # its `kill 0` is its own group, not the keeper's
    landlock = spec.get("landlock") != "0"
    abi = apply_landlock(spec, network) if landlock else 0
    if spec.get("seccomp") == "0":
        return
    machine = os.uname().machine
    if not network:
        apply_seccomp(machine)
    if not landlock:
        return  # in bubblewrap's PID namespace neither process is there to reach
    agent = int(spec.get("parent") or 0)
    try:
        agent_group = os.getpgid(agent) if agent else 0
    except OSError:
        agent_group = 0
    for filters in (
        others_program(machine, keeper, agent, agent_group),
        truncate_program(machine) if 0 < abi < 3 else None,
    ):
        if filters is not None:
            install_filter(filters)


def main(argv: list[str]) -> int:
    split = argv.index("--")
    spec = parse_spec(argv[1:split])
    command = argv[split + 1 :]
    status_fd = int(spec.get("status_fd", -1))
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if spec.get("parent") and os.getppid() != int(spec["parent"]):
        return 128 + signal.SIGTERM  # agentcli died before the death signal was armed
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    network = spec.get("network") == "1"
    try:
        if spec.get("caps") != "keep":
            drop_capabilities()  # for the keeper and, inherited, the command
    except OSError as error:
        sys.stderr.write(f"agentcli sandbox: could not confine the command: {error}\n")
        return 126
    child = os.fork()
    if child == 0:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        if status_fd >= 0:
            os.close(status_fd)
        try:
            confine(spec, network, os.getppid())
        except OSError as error:
            sys.stderr.write(f"agentcli sandbox: could not confine the command: {error}\n")
            os._exit(126)
        try:
            os.execv(command[0], command)
        except OSError as error:
            sys.stderr.write(f"agentcli sandbox: cannot run {command[0]}: {error.strerror}\n")
            os._exit(127)
    return supervise(child, status_fd, float(spec.get("grace", 1.0)))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
