"""End-to-end: the usual entry points — `agentcli` alone opens the REPL on a terminal and
reads the prompt from stdin otherwise, `agentcli "a prompt"` runs it, options may come
before the prompt, and every subcommand keeps its name."""

from __future__ import annotations

import pytest
import typer

from agentcli.cli.app import app
from agentcli.cli.options import SUBCOMMANDS, entry_args
from tests.conftest import RunCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer
from tests.test_repl import FOOTER, StartChat, chat  # noqa: F401 (chat: the fixture)


def user_prompts(server: ScriptedServer) -> list[str]:
    return [
        m["content"] for r in server.requests for m in r.json["messages"] if m["role"] == "user"
    ]


def test_the_subcommand_names_are_the_apps() -> None:
    assert set(SUBCOMMANDS) == set(typer.main.get_command(app).commands)


@pytest.mark.parametrize(
    ("args", "tty", "expected"),
    [
        ([], True, ["chat"]),
        ([], False, ["run"]),
        (["--yes", "-c"], True, ["chat", "--yes", "-c"]),
        (["--yes"], False, ["run", "--yes"]),
        (["hi there"], True, ["run", "hi there"]),
        (["-m", "openai:x", "hi"], True, ["run", "-m", "openai:x", "hi"]),
        (["--model=openai:x", "hi"], True, ["run", "--model=openai:x", "hi"]),
        (["-m", "doctor"], True, ["chat", "-m", "doctor"]),  # the model's name, not a prompt
        (["--", "-x"], True, ["run", "--", "-x"]),
        (["-"], True, ["run", "-"]),
        (["doctor"], False, ["doctor"]),
        (["sessions", "list"], True, ["sessions", "list"]),
        (["--help"], False, ["--help"]),
        (["-V"], True, ["-V"]),
    ],
)
def test_entry_args(args: list[str], tty: bool, expected: list[str]) -> None:
    assert entry_args(args, tty) == expected


def test_a_prompt_alone_runs_it(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["Hi ", "there."]))

    result = run_cli(["say hi"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hi there.\n"
    assert user_prompts(server) == ["say hi"]


def test_options_may_come_before_the_prompt(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["done"]))

    result = run_cli(
        ["--model", "openai:picked-model", "--yes", "--max-steps", "2", "-o", "json", "go"],
        server=server,
    )

    assert result.returncode == 0, result.stderr
    assert '"done"' in result.stdout  # -o json reached run
    assert server.requests[0].json["model"] == "picked-model"
    assert user_prompts(server) == ["go"]


def test_a_subcommand_name_is_the_subcommand(run_cli: RunCli, server: ScriptedServer) -> None:
    doctor = run_cli(["doctor"], server=server)
    assert doctor.returncode == 0, doctor.stderr
    assert doctor.stdout.startswith("sandbox:")
    assert server.requests == []

    server.enqueue(Reply.text(["I am not the doctor."]))
    as_prompt = run_cli(["run", "doctor"], server=server)
    assert as_prompt.returncode == 0, as_prompt.stderr
    assert user_prompts(server) == ["doctor"]


def test_bare_agentcli_reads_the_prompt_from_stdin(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["from a pipe"]), Reply.text(["again"]))

    bare = run_cli([], server=server, input="the piped prompt\n")
    with_option = run_cli(["--yes"], server=server, input="second prompt\n")

    assert bare.returncode == 0, bare.stderr
    assert bare.stdout == "from a pipe\n"
    assert with_option.returncode == 0, with_option.stderr
    assert user_prompts(server) == ["the piped prompt", "second prompt"]


def test_bare_agentcli_without_a_prompt_says_so(run_cli: RunCli, server: ScriptedServer) -> None:
    result = run_cli([], server=server)  # stdin is /dev/null: no prompt at all

    assert result.returncode == 2
    assert_one_error(result, "no prompt")
    assert "Usage:" not in result.stdout


def test_unquoted_words_are_one_clear_line(run_cli: RunCli, server: ScriptedServer) -> None:
    words = run_cli(["fix", "the", "bug"], server=server)
    typo = run_cli(["sesions", "list"], server=server)

    assert words.returncode == 2 and typo.returncode == 2
    assert_one_error(words, "'fix' is not a command", "agentcli 'fix the bug'")
    assert_one_error(typo, "did you mean `agentcli sessions`")
    option = run_cli(["--modle", "x", "hi"], server=server)  # the option is what is wrong
    assert option.returncode == 2
    assert_one_error(option, "No such option: --modle", "--model")
    assert server.requests == []


def test_bare_agentcli_on_a_terminal_opens_the_repl(
    chat: StartChat,  # noqa: F811 (the fixture imported above)
    server: ScriptedServer,
) -> None:
    server.enqueue(Reply.text(["Hello from the REPL."]))
    session = chat("--max-steps", "3", command=())

    screen = session.turn("hello")
    assert "Hello from the REPL." in screen
    assert FOOTER in screen
    session.submit("/exit")
    assert session.exit_status() == 0
    assert user_prompts(server) == ["hello"]
