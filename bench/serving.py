"""What the end-to-end benches share: a scripted model server in a process of its own
(over http:// or https:// with a loopback certificate), and one timed run of a program as a
whole process tree.

The server runs apart from the bench so that neither waits on the other's interpreter: a
client's cost per piece depends on how many pieces each of its reads brings, and a server
sharing a GIL with the bench would pace them by the bench's own work.

    python bench/serving.py --protocol chat --reply pieces:20000 [--tls DIR]

prints the server's base URL on its first line and answers every request with the replies
given, in turn, until its standard input closes. `--tls DIR` serves https:// with the
certificate `tls_files(DIR)` made; a client trusts it through DIR/ca.pem.
"""

from __future__ import annotations

import argparse
import os
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.scripted_server

CA_FILE = "ca.pem"
SERVER_FILE = "server.pem"
REPEATS = 2_000  # each reply queued this many times: enough for any bench's runs


def tls_files(directory: Path) -> Path:
    """A test CA and a certificate for 127.0.0.1 and localhost that it signed, written to
    `directory` (trustme, the python-trio project's library); the CA's file to trust."""
    import trustme

    authority = trustme.CA()
    authority.cert_pem.write_to_path(str(directory / CA_FILE))
    issued = authority.issue_cert("127.0.0.1", "localhost")
    issued.private_key_and_cert_chain_pem.write_to_path(str(directory / SERVER_FILE))
    return directory / CA_FILE


def server_context(directory: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(directory / SERVER_FILE))
    return context


def answer_tokens(count: int) -> list[str]:
    """The benches' streamed answer: Markdown in token-sized pieces (bench/streaming.py's)."""
    from bench.streaming import synthetic_tokens

    return synthetic_tokens(count)


def chat_reply(spec: str) -> Any:
    """A Chat Completions reply from its spec: `pieces:N` (the answer in N pieces),
    `whole:N` (the same answer in one piece), `text:WORDS`, `call:TOOL:JSON`."""
    from tests.scripted_server import Reply

    kind, _, value = spec.partition(":")
    if kind == "pieces":
        return Reply.text(answer_tokens(int(value)))
    if kind == "whole":
        return Reply.text(["".join(answer_tokens(int(value)))])
    if kind == "text":
        return Reply.text(value.split(" "))
    if kind == "call":
        tool, _, arguments = value.partition(":")
        return Reply.tool_calls([{"name": tool, "arguments": arguments}])
    raise SystemExit(f"unknown reply {spec!r}")


def serve(protocol: str, replies: Sequence[str], tls: Path | None) -> None:
    from tests.scripted_server import ScriptedServer

    if protocol != "chat":
        raise SystemExit(f"unknown protocol {protocol!r}")
    built = [chat_reply(spec) for spec in replies]
    context = server_context(tls) if tls else None
    with ScriptedServer(tls=context) as server:
        server.enqueue(*(built * REPEATS))
        print(server.base_url, flush=True)
        sys.stdin.read()  # until the bench closes it


@contextmanager
def served(protocol: str, *replies: str, tls: Path | None = None) -> Iterator[str]:
    """A server process answering with `replies` in turn; yields its base URL."""
    argv = [sys.executable, __file__, "--protocol", protocol, "--reply", *replies]
    if tls is not None:
        argv += ["--tls", str(tls)]
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdin is not None
        url = child.stdout.readline().strip()
        if not url:
            raise SystemExit("the scripted server did not start")
        yield url
    finally:
        if child.stdin is not None:
            child.stdin.close()
        child.wait(timeout=10)


class Run(NamedTuple):
    """One finished run of a program: its whole process tree, as the kernel counted it."""

    cpu: float  # user + system seconds of the process and every descendant it reaped
    wall: float  # seconds from the start to the exit
    peak_rss: int  # bytes, of the largest single process in the tree
    stdout: bytes


def timed_run(
    argv: Sequence[str], env: Mapping[str, str], cwd: str | Path, *, stdin: bytes = b""
) -> Run:
    """Runs `argv` to its end, its output read through a pipe as it comes."""
    started = time.perf_counter()
    child = subprocess.Popen(
        list(argv),
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert child.stdout is not None
    if stdin and child.stdin is not None:
        child.stdin.write(stdin)
        child.stdin.close()
    output = child.stdout.read()
    child.stdout.close()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        tail = output.decode(errors="replace")[-600:]
        raise SystemExit(f"{argv[0]} failed (exit {child.returncode}):\n{tail}")
    return Run(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss * 1024, output)


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", default="chat")
    parser.add_argument("--reply", nargs="+", required=True)
    parser.add_argument("--tls", type=Path, help="serve https:// with DIR's certificate")
    args = parser.parse_args()
    serve(args.protocol, args.reply, args.tls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
