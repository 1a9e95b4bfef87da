"""Fixtures for the end-to-end tests: a scripted model server, a workspace, and helpers that
run the installed `agentcli` executable as a subprocess with a minimal environment."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tests.scripted_server import ScriptedServer

# The real PostgreSQL server fixtures (`postgres`, `postgres_dsn`): tests/postgres.py.
pytest_plugins = ("tests.postgres",)

# Property tests draw the same examples in every run, so a verdict never depends on the
# run (a random draw that fails once and passes on the rerun is a flaky test). To explore
# new examples on purpose: HYPOTHESIS_PROFILE=explore python -m pytest tests/test_x.py.
settings.register_profile("repeatable", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

AGENTCLI = Path(sys.executable).parent / "agentcli"
ERROR_PREFIX = "agentcli: error:"

README_LINES = ["# Demo project", "alpha line", "beta line"]
NOTES_LINES = ["first note", "second note"]
OUTSIDE_LINES = ["secret outside the workspace"]

RunCli = Callable[..., subprocess.CompletedProcess[str]]
StartCli = Callable[..., subprocess.Popen[str]]


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as srv:
        yield srv
    errors = getattr(srv, "errors", None)
    if errors is not None:
        assert errors == [], "unexpected exceptions inside the scripted server"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """tmp_path/ws with README.md and notes.txt; tmp_path/outside.txt sits next to it."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "README.md").write_text("\n".join(README_LINES) + "\n", encoding="utf-8")
    (root / "notes.txt").write_text("\n".join(NOTES_LINES) + "\n", encoding="utf-8")
    (tmp_path / "outside.txt").write_text("\n".join(OUTSIDE_LINES) + "\n", encoding="utf-8")
    return root


@pytest.fixture
def cli_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


def numbered(lines: Sequence[str]) -> str:
    """How read_file shows lines: `cat -n` style, number right-aligned in 6 columns."""
    return "\n".join(f"{number:>6}\t{line}" for number, line in enumerate(lines, start=1))


def build_env(
    home: Path,
    server: ScriptedServer | None = None,
    extra: Mapping[str, str | None] | None = None,
) -> dict[str, str]:
    """A minimal environment: no proxies, no API key, no inherited agentcli settings.
    `extra` adds variables; a None value removes one."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": os.environ.get("LANG") or "C.UTF-8",
        "AGENTCLI_HOME": str(home / "agentcli"),
    }
    if server is not None:
        env["OPENAI_BASE_URL"] = server.base_url
    for name, value in (extra or {}).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def use_backend(cli_home: Path, backend: str) -> Path:
    """The user's configuration chooses this sandbox backend; returns its path."""
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[sandbox]\nbackend = "{backend}"\n')
    return config


def tool_results(server: ScriptedServer) -> dict[str, str]:
    """The tool results the model got in the last request, by call id."""
    messages = server.requests[-1].json["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m.get("role") == "tool"}


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(ERROR_PREFIX)]


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr, result.stderr


def assert_one_error(result: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Exactly one `agentcli: error:` line, containing every needle; returns it."""
    assert_no_traceback(result)
    lines = error_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def run_cli(workspace: Path, cli_home: Path) -> RunCli:
    """run_cli(args, *, server=None, input=None, env=None, cwd=None, timeout=30).

    Runs the installed executable in `cwd` (default: the workspace, so the workspace is the
    default root), stdin from /dev/null unless `input` is given. Fails on any traceback."""

    def run(
        args: Sequence[str],
        *,
        server: ScriptedServer | None = None,
        input: str | None = None,
        env: Mapping[str, str | None] | None = None,
        cwd: Path | None = None,
        timeout: float = 30,
        executable: Sequence[str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        command = [*(executable or [str(AGENTCLI)]), *args]
        result = subprocess.run(
            command,
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=build_env(cli_home, server, env),
            cwd=cwd or workspace,
            timeout=timeout,
            check=False,
        )
        assert_no_traceback(result)
        return result

    return run


@pytest.fixture
def start_cli(workspace: Path, cli_home: Path) -> Iterator[StartCli]:
    """start_cli(args, *, server=None, env=None, cwd=None) -> Popen (text pipes, stdin from
    /dev/null). Every process still running at teardown is killed."""
    started: list[subprocess.Popen[str]] = []

    def start(
        args: Sequence[str],
        *,
        server: ScriptedServer | None = None,
        env: Mapping[str, str | None] | None = None,
        cwd: Path | None = None,
    ) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [str(AGENTCLI), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=build_env(cli_home, server, env),
            cwd=cwd or workspace,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=5)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture(scope="session", autouse=True)
def no_stray_processes() -> Iterator[None]:
    """The suite must leave no process behind: nothing started by agentcli (it carries
    agentcli's process marker in its environment) may outlive the tests."""
    yield
    import time

    import psutil

    from agentcli.process.tree import MARKER_VARIABLE

    def strays() -> list[str]:
        found = []
        for proc in psutil.process_iter(["pid", "cmdline"]):
            try:
                if MARKER_VARIABLE in proc.environ() and proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(f"{proc.pid}: {' '.join(proc.info['cmdline'] or [])}")
            except psutil.Error:
                continue
        return found

    deadline = time.monotonic() + 3
    while (left := strays()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"processes left behind by the test suite: {left}"


@pytest.fixture(autouse=True)
def isolated_agentcli_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> Path:
    """In-process code under test reads and writes agentcli's home: never the real one."""
    home = tmp_path_factory.mktemp("agentcli-home")
    monkeypatch.setenv("AGENTCLI_HOME", str(home))
    return home


@pytest.fixture
def pty_cli(
    server: ScriptedServer, workspace: Path, cli_home: Path
) -> Iterator[Callable[..., Any]]:
    """pty_cli(args, *, width=200, timeout=10) -> a pexpect child running the installed
    agentcli on a real pseudo-terminal in the workspace; every child is closed at teardown."""
    import pexpect

    children: list[Any] = []

    def spawn(args: Sequence[str], *, width: int = 200, timeout: float = 10.0) -> Any:
        env = build_env(cli_home, server, {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"})
        child = pexpect.spawn(
            str(AGENTCLI),
            list(args),
            env=env,
            cwd=str(workspace),
            encoding="utf-8",
            codec_errors="replace",
            timeout=timeout,
            dimensions=(50, width),
        )
        children.append(child)
        return child

    yield spawn
    for child in children:
        if child.isalive():
            child.close(force=True)


# --- `-m "not slow"`: the everyday path ----------------------------------------------------
# What starts the installed CLI, a pseudo-terminal or the local model is marked slow by
# what it uses, so a new test is sorted without anyone remembering to mark it. The whole
# suite (CI's) runs everything; `python -m pytest -q -m "not slow"` is the quick loop.
SLOW_FIXTURES = frozenset(
    {"run_cli", "start_cli", "pty_cli", "sampled", "postgres", "postgres_dsn"}
)
# Modules whose tests start agentcli, its servers or real peers by other means (an MCP
# client, a pty helper of their own, the attack corpus run for real on both backends).
SLOW_MODULES = (
    "tests.test_e2e_",
    "tests.test_repl",
    "tests.test_mcp_serve",
    "tests.test_mcp_everything",
    "tests.test_mcp_client_features",
    "tests.test_mcp_resources",
    "tests.test_policy_escapes",
    "tests.test_protected_paths",
    "tests.test_file_races",
    "tests.test_agui_peers",
)


def _drives_a_terminal(module: Any) -> bool:
    if module.__name__.startswith(SLOW_MODULES):
        return True
    return any(hasattr(module, name) for name in ("Terminal", "pexpect"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = getattr(item, "module", None)
        uses = set(getattr(item, "fixturenames", ()))
        if (
            item.get_closest_marker("local_model")
            or uses & SLOW_FIXTURES
            or (module is not None and _drives_a_terminal(module))
        ):
            item.add_marker(pytest.mark.slow)
