"""`agentcli policy explain --stdin`: JSON lines of calls in, one JSON decision per line out,
in one process; a bad line gets an error line of its own and the rest go on."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import AGENTCLI, RunCli, assert_no_traceback, assert_one_error, build_env

KEYS = {"line", "tool", "risk", "decision", "by", "rule", "reasons", "sandbox"}


def decisions(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_each_line_gets_the_decision_explain_gives(run_cli: RunCli) -> None:
    calls = [
        {"command": "git status"},
        {"command": "git push origin main"},
        {"tool": "write_file", "args": {"path": "src/a.py", "content": ""}},
        {"tool": "read_file", "args": {"path": "README.md"}},
        {"tool": "run_shell", "args": {"command": "rm -rf build"}},
    ]
    text = "\n".join(json.dumps(c) for c in calls) + "\n\n"  # a blank line is skipped
    result = run_cli(["policy", "explain", "--stdin", "--allow", "write_file(src/**)"], input=text)
    assert result.returncode == 0, result.stderr
    out = decisions(result.stdout)
    assert [d["line"] for d in out] == [1, 2, 3, 4, 5]
    assert all(set(d) == KEYS for d in out)
    got = [(d["tool"], d["risk"], d["decision"], d["by"]) for d in out]
    assert got == [
        ("run_shell", "low", "allow", "auto"),
        ("run_shell", "high", "ask", "auto"),
        ("write_file", "medium", "allow", "rule"),
        ("read_file", "low", "allow", "auto"),
        ("run_shell", "high", "ask", "auto"),
    ]
    # The same as one `policy explain` per call gives
    single = run_cli(["policy", "explain", "run_shell", "git push origin main", "--json"])
    assert json.loads(single.stdout) == {k: v for k, v in out[1].items() if k != "line"}


def test_a_bad_line_is_an_error_line_and_the_rest_go_on(run_cli: RunCli) -> None:
    lines = [
        "{not json",
        "[1, 2]",
        json.dumps({"tool": "no_such_tool", "args": {}}),
        json.dumps({"tool": "write_file", "args": {"path": 1}}),
        json.dumps({"command": 5}),
        json.dumps({"tool": "read_file", "args": "README.md"}),
        json.dumps({"tool": "read_file", "args": {"path": "a\u0000b"}}),  # fails inside assess
        json.dumps({"command": "ls"}),
    ]
    result = run_cli(["policy", "explain", "--stdin"], input="\n".join(lines) + "\n")
    assert result.returncode == 2, result.stderr  # documented: some line was not explained
    out = decisions(result.stdout)
    assert [d["line"] for d in out] == list(range(1, 9))
    errors = [d for d in out if "error" in d]
    assert [d["line"] for d in errors] == [1, 2, 3, 4, 5, 6, 7]
    assert all(set(d) == {"line", "error"} and d["error"] for d in errors)
    assert "no_such_tool" in errors[2]["error"] and "path" in errors[3]["error"]
    assert out[-1]["decision"] == "allow" and out[-1]["tool"] == "run_shell"
    assert result.stderr == ""


def test_stdin_usage_errors(run_cli: RunCli) -> None:
    result = run_cli(["policy", "explain", "--stdin", "run_shell"], input="")
    assert result.returncode == 2
    assert_one_error(result, "--stdin")
    result = run_cli(["policy", "explain"])
    assert result.returncode == 2
    assert_one_error(result, "--stdin")
    result = run_cli(["policy", "explain", "--stdin", "--yes", "--deny"], input="")
    assert result.returncode == 2
    assert_one_error(result, "--deny")


def test_decisions_stream_as_lines_arrive(workspace: Path, cli_home: Path) -> None:
    """One process answers each line as it comes: a reader gets the first decision before
    the input has ended."""
    process = subprocess.Popen(
        [str(AGENTCLI), "policy", "explain", "--stdin"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=build_env(cli_home),
        cwd=workspace,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps({"command": "git push"}) + "\n")
        process.stdin.flush()
        first = json.loads(process.stdout.readline())
        assert (first["line"], first["decision"]) == (1, "ask")
        process.stdin.write(json.dumps({"command": "pwd"}) + "\n")
        process.stdin.close()
        second = json.loads(process.stdout.readline())
        assert (second["line"], second["decision"]) == (2, "allow")
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
        process.wait()


def test_many_commands_in_one_process(run_cli: RunCli) -> None:
    commands = [f"grep -n item{i} notes.txt" for i in range(300)]
    text = "".join(json.dumps({"command": c}) + "\n" for c in commands)
    start = time.monotonic()
    result = run_cli(["policy", "explain", "--stdin"], input=text, timeout=120)
    took = time.monotonic() - start
    assert_no_traceback(result)
    out = decisions(result.stdout)
    assert len(out) == 300 and all(d["decision"] == "allow" for d in out)
    assert took < 60  # generous: the bench measures the rate (bench/policy.py)


def test_explain_imports_no_event_loop_network_or_rendering(cli_home: Path, workspace: Path):
    """`policy explain` only decides: like `--version`, it must not pay for asyncio, the
    HTTP stack, the REPL, rich's Markdown or jsonschema, nor for what only other paths use
    (dataclasses and inspect, tempfile and shutil, importlib.resources, and tomllib while
    no configuration file exists; bench/README.md lists its imports). AGENTCLI_HOME is set
    here, as in CI; without it, platformdirs finds the directories (and brings tempfile)."""
    unwanted = (
        "asyncio",
        "httpx",
        "prompt_toolkit",
        "jsonschema",
        "dataclasses",
        "inspect",
        "tempfile",
        "shutil",
        "tomllib",
    )
    probe = (
        "import sys; from agentcli.__main__ import main\n"
        "sys.argv = ['agentcli', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "print(code, sorted(m for m, mod in sys.modules.items() if mod is not None and"
        f" m.split('.')[0] in {unwanted!r}"
        " or m in ('rich.markdown', 'importlib.resources')), file=sys.stderr)"
    )
    for args in (["run_shell", "git status"], ["read_file", '{"path": "README.md"}', "--json"]):
        done = subprocess.run(
            [sys.executable, "-c", probe, "policy", "explain", *args],
            capture_output=True,
            text=True,
            env=build_env(cli_home),
            cwd=workspace,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
        assert "allow" in done.stdout, done.stderr
        assert done.stderr.strip().splitlines()[-1] == "0 []", done.stderr
