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
the seccomp filter before it runs, so that the keeper stands outside the command's domain
(with Landlock's signal scoping, ABI 6+, nothing inside can kill it). Its spec is a list of
words before `--`: `read=PATH`, `write=PATH`,
`device=PATH`, `network=1`, `status_fd=N`, `parent=PID`, `grace=SECONDS`, `caps=keep`,
`landlock=0`, `seccomp=0`. It reports `EXIT LEFTOVERS` on the status descriptor."""

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
X32_SYSCALL_BIT = 0x40000000
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
EACCES = 13
EPERM = 1
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


def landlock_abi() -> int:
    result = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), 1)
    return int(result) if result > 0 else 0


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
    abi = landlock_abi()
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


def apply_seccomp(machine: str) -> bool:
    filters = seccomp_program(machine)
    if filters is None:
        return False
    fbuf = ctypes.create_string_buffer(filters, len(filters))
    prog = struct.pack("HxxxxxxP", len(filters) // 8, ctypes.addressof(fbuf))
    pbuf = ctypes.create_string_buffer(prog, len(prog))
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _check(
        _libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), pbuf, 0, 0),
        "prctl(PR_SET_SECCOMP)",
    )
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


def confine(spec: dict, network: bool) -> None:
    """The command's own confinement, applied in the child just before it runs: the keeper
    stays outside the Landlock domain, where (signals being scoped, ABI 6+) nothing the
    command starts can signal it, so nothing it starts can outlive it."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the keeper gone, the command goes with it
    if spec.get("landlock") != "0":
        apply_landlock(spec, network)
    if not network and spec.get("seccomp") != "0":
        apply_seccomp(os.uname().machine)


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
            confine(spec, network)
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
