"""End-to-end: finding out what agentcli will do — `config show` names the model and where
it came from, an unknown key gets "did you mean", `trust --list` says when nothing is
trusted, `sessions list` filters and shows the model, and `run -c` says what it continued."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import RunCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer


def user_config(cli_home: Path, text: str) -> Path:
    path = cli_home / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def model_row(run_cli: RunCli, **kwargs) -> dict:  # type: ignore[no-untyped-def]
    shown = run_cli(["config", "show", "--json"], **kwargs)
    assert shown.returncode == 0, shown.stderr
    [row] = [r for r in json.loads(shown.stdout)["settings"] if r["key"] == "model"]
    return row


def model_line(run_cli: RunCli, **kwargs) -> str:  # type: ignore[no-untyped-def]
    shown = run_cli(["config", "show"], **kwargs)
    assert shown.returncode == 0, shown.stderr
    [line] = [line for line in shown.stdout.splitlines() if line.split()[0] == "model"]
    return line


# --- config show: the model ---


@pytest.mark.parametrize(
    ("env", "value", "source"),
    [
        ({"OPENAI_API_KEY": "k"}, "openai:gpt-4.1-mini", "default: OPENAI_API_KEY is set"),
        (
            {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
            "openai:gpt-4.1-mini",
            "default: OPENAI_BASE_URL is set",
        ),
        (
            {"ANTHROPIC_API_KEY": "k"},
            "anthropic:claude-sonnet-4-5",
            "default: ANTHROPIC_API_KEY is set",
        ),
        (
            {"AGENTCLI_MODEL": "anthropic", "OPENAI_API_KEY": "k"},
            "anthropic:claude-sonnet-4-5",
            "env AGENTCLI_MODEL",
        ),
    ],
    ids=["openai-key", "base-url", "anthropic-key", "env-model"],
)
def test_config_show_names_the_model_and_why(
    run_cli: RunCli, env: dict[str, str], value: str, source: str
) -> None:
    row = model_row(run_cli, env=env)

    assert (row["value"], row["source"]) == (value, source)
    line = model_line(run_cli, env=env)
    assert value in line and line.endswith(source)


def test_config_show_model_from_a_file_with_an_alias(run_cli: RunCli, cli_home: Path) -> None:
    path = user_config(
        cli_home,
        'model = "work:big"\n[providers.work]\ntype = "openai"\n'
        'base_url = "http://127.0.0.1:9/v1"\nmodels = { big = "the-big-one" }\n',
    )

    row = model_row(run_cli)

    assert (row["value"], row["source"]) == ("work:the-big-one", str(path))


def test_config_show_says_when_there_is_no_model(run_cli: RunCli, cli_home: Path) -> None:
    user_config(cli_home, "[providers.local]\nauto = false\n")  # the embedded one: not asked

    line = model_line(run_cli)

    assert "(none)" in line and "OPENAI_API_KEY" in line
    assert len(line) < 140
    assert model_row(run_cli)["value"] is None


# --- unknown keys ---


def test_unknown_keys_get_did_you_mean(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    path = user_config(cli_home, 'max_step = 5\n[sandbox]\nmod = "off"\ncolour = "x"\n')
    server.enqueue(Reply.text(["fine"]))

    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 3, result.stderr
    assert all(str(path) in line for line in warnings)
    assert "'max_step' is ignored (did you mean 'max_steps'?)" in warnings[0]
    assert "'sandbox.mod' is ignored (did you mean 'sandbox.mode'?)" in warnings[1]
    assert "did you mean" not in warnings[2]  # nothing is close to sandbox.colour

    refused = run_cli(["config", "set", "shel.env", '["HOME"]'])
    assert refused.returncode == 2
    assert_one_error(refused, "unknown setting 'shel.env' (did you mean 'shell.env'?)")


# --- trust --list ---


def test_trust_list_says_when_nothing_is_trusted(run_cli: RunCli, workspace: Path) -> None:
    empty = run_cli(["trust", "--list"])
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout == "no workspace is trusted yet; `agentcli trust PATH` trusts one\n"

    assert run_cli(["trust"]).returncode == 0
    listed = run_cli(["trust", "--list"])
    assert listed.stdout == f"{workspace.resolve()}\n"


# --- sessions list ---


def write_empty_session(cli_home: Path, session_id: str) -> None:
    directory = cli_home / "agentcli" / "data" / "sessions"
    directory.mkdir(parents=True, exist_ok=True)
    header = {
        "t": "session",
        "id": session_id,
        "created": "2026-01-01T00:00:00+0000",
        "workspace": "/w",
        "model": "openai:m",
        "agentcli": "0",
        "format": 1,
    }
    (directory / f"{session_id}.jsonl").write_text(json.dumps(header) + "\n")


def listed_ids(run_cli: RunCli, *args: str) -> list[str]:
    result = run_cli(["sessions", "list", "--json", *args])
    assert result.returncode == 0, result.stderr
    return [row["id"] for row in json.loads(result.stdout)]


def test_sessions_list_filters_and_shows_the_model(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    server.enqueue(Reply.text(["1"]), Reply.text(["2"]), Reply.text(["3"]))
    for prompt, model in (
        ("fix the flaky test", "openai:first-model"),
        ("write the docs", "openai:second-model"),
        ("the FLAKY one again", "openai:third-model"),
    ):
        assert run_cli(["run", "-m", model, prompt], server=server).returncode == 0
        time.sleep(1.05)  # session ids tell the second: latest first needs distinct ones
    write_empty_session(cli_home, "20000101-000000-emptyy")
    everything = listed_ids(run_cli, "--all")
    assert len(everything) == 4 and everything[-1] == "20000101-000000-emptyy"
    rows = json.loads(run_cli(["sessions", "list", "--json"]).stdout)
    by_prompt = {row["first_prompt"]: row["id"] for row in rows}
    first, second, third = (
        by_prompt[p] for p in ("fix the flaky test", "write the docs", "the FLAKY one again")
    )
    assert everything[:3] == [third, second, first]  # latest first

    assert listed_ids(run_cli) == [third, second, first]  # no empty session
    assert listed_ids(run_cli, "-n", "2") == [third, second]
    assert listed_ids(run_cli, "--query", "flaky") == [third, first]
    assert listed_ids(run_cli, "--query", "flaky", "-n", "1") == [third]

    table = run_cli(["sessions", "list"])
    header, *rows = table.stdout.splitlines()
    assert "model" in header.split()
    assert [row.split()[0] for row in rows] == [third, second, first]
    assert "openai:second-model" in rows[1] and "write the docs" in rows[1]
    nothing = run_cli(["sessions", "list", "--query", "no such words"])
    assert (
        nothing.stdout == "no sessions matching 'no such words' (--all shows the empty ones too)\n"
    )
    bad = run_cli(["sessions", "list", "-n", "0"])
    assert bad.returncode == 2
    assert_one_error(bad, "-n must be at least 1")


# --- run -c ---


def test_run_continue_says_which_session(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    server.enqueue(Reply.text(["First."]), Reply.text(["Second."]))
    first = run_cli(["run", "-o", "jsonl", "plan the   release\nnotes"], server=server)
    [session_id] = [
        e["threadId"]
        for e in map(json.loads, first.stdout.splitlines())
        if e["type"] == "RUN_STARTED"
    ]
    assert "continuing" not in first.stderr

    second = run_cli(["run", "-c", "go on"], server=server)

    assert second.returncode == 0, second.stderr
    assert second.stdout == "Second.\n"
    assert (
        f"agentcli: continuing session {session_id} “plan the release notes” (1 earlier turn)"
        in second.stderr.splitlines()
    )
