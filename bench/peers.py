"""agentcli against the agent shells installed beside it, on the same scripted turns.

    python bench/peers.py [--rounds N] [--cases text,read,shell,stream] [--schemes http,https]
                          [--peers-dir DIR] [--install]

Peers, each found in its own prefix under --peers-dir (default: $XDG_CACHE_HOME or
~/.cache, agentcli-bench/peers), never in agentcli's venv; `--install` puts the missing
ones there first:

- the Codex CLI: `npm install --prefix DIR/codex @openai/codex` (its Rust binary ships in
  the package), speaking the OpenAI Responses API (`wire_api = "responses"`, the only wire
  format it has for a custom provider), which a bench-only scripted server speaks
  (bench/scripted_responses.py);
- Claude Code: `npm install --prefix DIR/claude @anthropic-ai/claude-code`, speaking the
  Anthropic Messages API (tests/scripted_anthropic.py);
- `llm` (PyPI): `python -m venv DIR/llm && DIR/llm/bin/pip install llm`, speaking Chat
  Completions like agentcli (tests/scripted_server.py); it has no file or shell tools, so
  it runs the text and stream cases only.

Each protocol's server runs in its own process (bench/serving.py) and answers by what each
request holds, so every peer gets the same turns: `text` a two-piece answer; `read` a call
of the peer's own file-reading tool (Codex has none: `cat README.md` through its shell
tool) and then "Done."; `shell` a call of its shell tool for `ls`, then "Done."; `stream`
the 20,000-piece Markdown answer of bench/streaming.py. Over http:// and over https:// (a
loopback certificate from a test CA, trusted through SSL_CERT_FILE, and Node's
NODE_EXTRA_CA_CERTS for Claude Code).

Runs are interleaved (every peer in each round, the order rotating), each from its start
to its exit with its output read through a pipe; wall time, CPU (user + system of the whole
process tree, as the kernel counted every process the peer waited for) and peak RSS (the
largest single process) are reported as medians, with agentcli's ratio to each peer taken
round by round and its median. Every peer runs with a fresh home, no telemetry or update
checks (each is turned off by its own setting: it would leave this machine otherwise),
and its defaults otherwise: its own sandbox, its session log.

Not a test and not part of CI: it needs the peers, minutes, and an idle machine to mean
much. Targets (issue 42): the stream <= 1.0x Codex's wall and CPU over http and https; a
text, a read and a shell command <= 0.5x Codex's wall.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.serving import (  # noqa: E402
    FINAL_TEXT,
    READ_FILE,
    Run,
    load_average,
    served,
    timed_run,
    tls_files,
)

AGENTCLI = str(Path(sys.executable).with_name("agentcli"))
CASES = ("text", "read", "shell", "stream")
PIECES = 20_000
EXPECTED = {"text": "Hello!", "read": FINAL_TEXT, "shell": FINAL_TEXT}
TARGETS = {"text": ("wall", 0.5), "read": ("wall", 0.5), "shell": ("wall", 0.5)}
CODEX_CONFIG = """\
check_for_update_on_startup = false
model = "scripted-model"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "http://127.0.0.1:9/v1"
env_key = "SCRIPTED_API_KEY"
wire_api = "responses"

[features]
plugins = false

[analytics]
enabled = false
"""
NO_TRAFFIC = {  # Claude Code's own switches for what it would send elsewhere
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


class Peer(NamedTuple):
    name: str
    protocol: str  # which scripted server it speaks to
    cases: tuple[str, ...]
    # (base URL, scheme, prompt, its home, the CA file) -> argv, environment
    command: Callable[[str, str, str, Path, Path], tuple[list[str], dict[str, str]]]


def base_env(home: Path) -> dict[str, str]:
    """What every peer starts from: no proxies, no keys, a home of its own."""
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": os.environ.get("LANG") or "C.UTF-8",
        "NO_COLOR": "1",
    }


def agentcli_peer(program: str) -> Peer:
    def command(url: str, scheme: str, prompt: str, home: Path, ca: Path):
        env = base_env(home) | {
            "OPENAI_BASE_URL": url,
            "OPENAI_API_KEY": "bench",
            "AGENTCLI_MODEL": "openai:scripted-model",
            "AGENTCLI_HOME": str(home / "agentcli"),
            "SSL_CERT_FILE": str(ca),
        }
        return [program, "run", prompt], env

    return Peer("agentcli", "chat", CASES, command)


def codex_peer(program: str) -> Peer:
    def command(url: str, scheme: str, prompt: str, home: Path, ca: Path):
        codex_home = home / "codex"
        if not codex_home.exists():
            codex_home.mkdir(parents=True)
            (codex_home / "config.toml").write_text(CODEX_CONFIG)
        env = base_env(home) | {
            "CODEX_HOME": str(codex_home),
            "SCRIPTED_API_KEY": "bench",
            "SSL_CERT_FILE": str(ca),
        }
        where = f'model_providers.scripted.base_url="{url}"'
        return [program, "exec", "--skip-git-repo-check", "-c", where, prompt], env

    return Peer("codex", "responses", CASES, command)


def claude_peer(program: str) -> Peer:
    def command(url: str, scheme: str, prompt: str, home: Path, ca: Path):
        env = base_env(home) | NO_TRAFFIC
        env |= {
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "sk-ant-bench",
            "NODE_EXTRA_CA_CERTS": str(ca),
        }
        return [program, "-p", prompt], env

    return Peer("claude", "anthropic", CASES, command)


def llm_peer(program: str) -> Peer:
    def command(url: str, scheme: str, prompt: str, home: Path, ca: Path):
        user_path = home / "llm"
        user_path.mkdir(parents=True, exist_ok=True)
        models = user_path / "extra-openai-models.yaml"
        models.write_text(
            f'- model_id: scripted\n  model_name: scripted-model\n  api_base: "{url}"\n'
        )
        env = base_env(home) | {"LLM_USER_PATH": str(user_path), "SSL_CERT_FILE": str(ca)}
        env["OPENAI_API_KEY"] = "bench"
        return [program, "-m", "scripted", prompt], env

    return Peer("llm", "chat", ("text", "stream"), command)


PEER_PATHS = {  # under --peers-dir: where --install puts each
    "codex": Path("codex/node_modules/.bin/codex"),
    "claude": Path("claude/node_modules/.bin/claude"),
    "llm": Path("llm/bin/llm"),
}
MAKERS = {"codex": codex_peer, "claude": claude_peer, "llm": llm_peer}


def install(peers_dir: Path, name: str) -> None:
    prefix = peers_dir / name
    print(f"installing {name} into {prefix} ...", file=sys.stderr)
    if name == "llm":
        subprocess.run([sys.executable, "-m", "venv", str(prefix)], check=True)
        pip = [str(prefix / "bin" / "python"), "-m", "pip", "install", "-q", "llm"]
        subprocess.run(pip, check=True)
        return
    package = {"codex": "@openai/codex", "claude": "@anthropic-ai/claude-code"}[name]
    npm = shutil.which("npm")
    if npm is None:
        print(f"  no npm: {name} is left out", file=sys.stderr)
        return
    prefix.mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, "install", "--silent", "--no-fund", "--no-audit", package], cwd=prefix)


def found_peers(peers_dir: Path, wanted: list[str], program: str) -> list[Peer]:
    peers = [agentcli_peer(program)]
    for name in wanted:
        path = peers_dir / PEER_PATHS[name]
        if path.exists():
            peers.append(MAKERS[name](str(path)))
        else:
            print(f"note: {name} is not installed at {path} (--install puts it there)")
    return peers


def checked(run: Run, peer: str, case: str) -> Run:
    text = run.stdout.decode(errors="replace")
    wanted = EXPECTED.get(case)
    if wanted is not None and wanted not in text:
        raise SystemExit(f"{peer} {case}: {wanted!r} not in its output:\n{text[-800:]}")
    if case == "stream" and len(text) < PIECES:
        raise SystemExit(f"{peer} stream: only {len(text)} characters came out")
    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--peers-dir", type=Path, default=cache / "agentcli-bench" / "peers")
    parser.add_argument("--peers", default="codex,claude,llm")
    parser.add_argument("--install", action="store_true", help="install missing peers first")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--schemes", default="http,https")
    parser.add_argument("--program", default=AGENTCLI, help="the agentcli executable")
    args = parser.parse_args()
    wanted = [name for name in args.peers.split(",") if name]
    cases = [case for case in args.cases.split(",") if case]
    schemes = [scheme for scheme in args.schemes.split(",") if scheme]
    if args.install:
        for name in wanted:
            if not (args.peers_dir / PEER_PATHS[name]).exists():
                install(args.peers_dir, name)
    peers = found_peers(args.peers_dir, wanted, args.program)
    # Homes and the workspace sit beside the peers, not in /tmp: Codex declines some of
    # its start-up work under a temporary directory, and users' homes are not there.
    args.peers_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.peers_dir, prefix="run-") as scratch:
        work = Path(scratch)
        workspace = work / "workspace"
        workspace.mkdir()
        (workspace / READ_FILE).write_text(
            "# Demo project\n" + "".join(f"line {n}\n" for n in range(1, 41))
        )
        certificates = work / "tls"
        certificates.mkdir()
        ca = tls_files(certificates)
        for scheme in schemes:
            with ExitStack() as stack:
                tls = certificates if scheme == "https" else None
                urls = {
                    protocol: stack.enter_context(
                        served(protocol, pieces=PIECES, workspace=workspace, tls=tls)
                    )
                    for protocol in {peer.protocol for peer in peers}
                }
                for case in cases:
                    measure(peers, case, scheme, urls, work, workspace, ca, args)
    return 0  # a benchmark reports; it does not gate


def measure(
    peers: list[Peer],
    case: str,
    scheme: str,
    urls: dict[str, str],
    work: Path,
    workspace: Path,
    ca: Path,
    args: argparse.Namespace,
) -> None:
    taking = [peer for peer in peers if case in peer.cases]
    runs: dict[str, list[Run]] = {peer.name: [] for peer in taking}
    started = load_average()
    order = itertools.cycle(range(len(taking)))
    for round_ in range(args.warmup + args.rounds):
        first = next(order)  # the order rotates: no peer always runs after the same one
        for peer in taking[first:] + taking[:first]:
            home = work / "homes" / peer.name
            argv, env = peer.command(urls[peer.protocol], scheme, f"bench-{case}", home, ca)
            run = checked(timed_run(argv, env, workspace), peer.name, case)
            if round_ >= args.warmup:
                runs[peer.name].append(run)
    print(
        f"\n{case} over {scheme}: {args.rounds} interleaved rounds; load average "
        f"{started} at the start, {load_average()} at the end"
    )
    print(f"{'peer':<10}{'wall':>9}{'cpu':>9}{'peak rss':>10}   agentcli / peer: wall, cpu")
    ours = runs["agentcli"]
    for name, measured in runs.items():
        wall = statistics.median(run.wall for run in measured)
        cpu = statistics.median(run.cpu for run in measured)
        peak = statistics.median(run.peak_rss for run in measured) / 2**20
        line = f"{name:<10}{wall:>8.3f}s{cpu:>8.3f}s{peak:>7.0f} MiB"
        if name != "agentcli":
            walls = statistics.median(a.wall / b.wall for a, b in zip(ours, measured, strict=True))
            cpus = statistics.median(a.cpu / b.cpu for a, b in zip(ours, measured, strict=True))
            line += f"   {walls:.2f}x, {cpus:.2f}x"
            if name == "codex":
                line += verdict(case, walls, cpus)
        print(line)


def verdict(case: str, wall: float, cpu: float) -> str:
    if case == "stream":
        ok = wall <= 1.0 and cpu <= 1.0
        return f"  (target <= 1.0x both: {'PASS' if ok else 'FAIL'})"
    _, limit = TARGETS[case]
    return f"  (target wall <= {limit}x: {'PASS' if wall <= limit else 'FAIL'})"


if __name__ == "__main__":
    sys.exit(main())
