"""What the end-to-end benches share: a scripted model server in a process of its own
(over http:// or https:// with a loopback certificate), and one timed run of a program as a
whole process tree.

The server runs apart from the bench so that neither waits on the other's interpreter: a
client's cost per piece depends on how many pieces each of its reads brings, and a server
sharing a GIL with the bench would pace them by the bench's own work.

    python bench/serving.py --protocol chat|responses|anthropic [--tls DIR] [--pieces N]

prints the server's base URL on its first line and serves until its standard input
closes. It answers each request from what the request holds, so any number of clients and
turns can share it: a request that carries a tool's result gets the final text ("Done."),
and otherwise the prompt's case word (CASES) chooses: a short text, a call of the client's
file-reading or shell tool, the N-piece answer or the same answer in one piece. `--tls DIR`
serves https:// with the certificate `tls_files(DIR)` made; a client trusts DIR/ca.pem.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.scripted_server

CA_FILE = "ca.pem"
SERVER_FILE = "server.pem"
# The case a prompt asks for: `bench-text`, `bench-read`, ... anywhere in the request.
CASES = ("text", "read", "shell", "stream", "whole")
CASE_WORD = re.compile(r"bench-(" + "|".join(CASES) + r")\b")
FINAL_TEXT = "Done."
READ_FILE = "README.md"  # the file a read asks for, in the client's working directory
SHELL_COMMAND = "ls"


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


def has_tool_result(body: Any) -> bool:
    """Whether the request carries a tool's result, in any of the three protocols."""
    if not isinstance(body, dict):
        return False
    for message in body.get("messages") or body.get("input") or []:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool" or message.get("type") == "function_call_output":
            return True
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(block, dict) and block.get("type") == "tool_result" for block in content
        ):
            return True
    return False


class Replies(NamedTuple):
    """One protocol's replies for each case."""

    text: Callable[[Sequence[str]], Any]
    read: Callable[[], Any]
    shell: Callable[[], Any]


def chat_replies(workspace: Path) -> Replies:
    from tests.scripted_server import Reply

    def call(name: str, arguments: dict[str, Any]) -> Any:
        return Reply.tool_calls([{"name": name, "arguments": arguments}])

    return Replies(
        text=lambda pieces: rendered_chat(Reply.text(pieces)),
        read=lambda: call("read_file", {"path": READ_FILE}),
        shell=lambda: call("run_shell", {"command": SHELL_COMMAND}),
    )


def responses_replies(workspace: Path) -> Replies:
    """Codex reads a file with its shell tool: it has no other."""
    from bench.scripted_responses import ResponsesReply

    def command(line: str) -> Any:
        return ResponsesReply.function_call("exec_command", {"cmd": line})

    return Replies(
        text=ResponsesReply.text,
        read=lambda: command(f"cat {READ_FILE}"),
        shell=lambda: command(SHELL_COMMAND),
    )


def anthropic_replies(workspace: Path) -> Replies:
    from tests.scripted_anthropic import AReply

    def call(name: str, arguments: dict[str, Any]) -> Any:
        return AReply.tool_use([{"name": name, "input": arguments}])

    return Replies(
        text=lambda pieces: rendered_anthropic(AReply.text(pieces)),
        read=lambda: call("Read", {"file_path": str(workspace / READ_FILE)}),
        shell=lambda: call("Bash", {"command": SHELL_COMMAND, "description": "List files"}),
    )


# Every server writes what it has rendered once, at start-up: rendering 20,000 events at each
# request (as the test servers do, to echo the request's model) would make the servers'
# speeds differ, and with them every client's wall time.


def rendered_chat(reply: Any) -> Any:
    """`reply` with its steps written out as the Chat Completions server would."""
    from tests.scripted_server import Chunk, Done, Raw, Usage
    from tests.sse_server import dumps

    head = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0}
    head["model"] = "scripted-model"
    texts = []
    for step in reply.steps:
        if isinstance(step, Chunk):
            choice = {"index": 0, "delta": step.delta, "finish_reason": step.finish_reason}
            texts.append(f"data: {dumps({**head, 'choices': [choice]})}\n\n")
        elif isinstance(step, Usage):
            usage = {"prompt_tokens": step.prompt_tokens}
            usage["completion_tokens"] = step.completion_tokens
            usage["total_tokens"] = step.prompt_tokens + step.completion_tokens
            texts.append(f"data: {dumps({**head, 'choices': [], 'usage': usage})}\n\n")
        elif isinstance(step, Done):
            texts.append("data: [DONE]\n\n")
    return replace(reply, steps=tuple(Raw(text) for text in texts))


def rendered_anthropic(reply: Any) -> Any:
    """`reply` with its events written out as the Anthropic server would."""
    from tests.scripted_anthropic import Event
    from tests.sse_server import Raw, dumps

    texts = []
    for step in reply.render():
        if isinstance(step, Event):
            data = step.data
            if step.name == "message_start":
                message = {**data["message"], "id": "msg_bench", "model": "claude-scripted"}
                data = {**data, "message": message}
            texts.append(f"event: {step.name}\ndata: {dumps(data)}\n\n")
    return replace(reply, steps=tuple(Raw(text) for text in texts))


PROTOCOLS: dict[str, tuple[str, str, Callable[[Path], Replies]]] = {
    # name: (module, server class, replies)
    "chat": ("tests.scripted_server", "ScriptedServer", chat_replies),
    "responses": ("bench.scripted_responses", "ScriptedResponses", responses_replies),
    "anthropic": ("tests.scripted_anthropic", "ScriptedAnthropic", anthropic_replies),
}


def serve(protocol: str, pieces: int, workspace: Path, tls: Path | None) -> None:
    import importlib

    module, name, make_replies = PROTOCOLS[protocol]
    base = getattr(importlib.import_module(module), name)
    replies = make_replies(workspace)
    tokens = answer_tokens(pieces)
    answers = {  # built once: the long answer's events are rendered at each request
        "stream": replies.text(tokens),
        "whole": replies.text(["".join(tokens)]),
        "text": replies.text(["Hello", "!"]),
        "final": replies.text([FINAL_TEXT]),
    }

    class Answering(base):
        def reply_for(self, request: Any) -> Any:
            if has_tool_result(request.json):
                return answers["final"]
            found = CASE_WORD.search(json.dumps(request.json))
            case = found.group(1) if found else "text"
            if case == "read":
                return replies.read()
            if case == "shell":
                return replies.shell()
            return answers[case]

    context = server_context(tls) if tls else None
    with Answering(tls=context) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # until the bench closes it


@contextmanager
def served(
    protocol: str, *, pieces: int = 20_000, workspace: Path = ROOT, tls: Path | None = None
) -> Iterator[str]:
    """A server process for `protocol`; yields its base URL."""
    argv = [sys.executable, __file__, "--protocol", protocol, "--pieces", str(pieces)]
    argv += ["--workspace", str(workspace)]
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
    parser.add_argument("--protocol", choices=list(PROTOCOLS), default="chat")
    parser.add_argument("--pieces", type=int, default=20_000, help="the long answer's length")
    parser.add_argument("--workspace", type=Path, default=ROOT, help="where a read reads")
    parser.add_argument("--tls", type=Path, help="serve https:// with DIR's certificate")
    args = parser.parse_args()
    serve(args.protocol, args.pieces, args.workspace, args.tls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
