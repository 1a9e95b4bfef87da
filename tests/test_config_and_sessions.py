"""Configuration layers, session files and the conversation's repair and compaction."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentcli.agent.compaction import Compactor, split_point, transcript
from agentcli.config import load_config, trust
from agentcli.config.edit import parse_value, set_value
from agentcli.config.files import line_of, read_config_file
from agentcli.context.instructions import find_instructions
from agentcli.conversation import events as ev
from agentcli.conversation.messages import INTERRUPTED, Conversation, Message, ToolCall
from agentcli.errors import ConfigError, UsageError
from agentcli.sessions.session import Session
from agentcli.sessions.shapes import session_entries


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def test_precedence_flags_env_project_user_default(ws, isolated_agentcli_home):
    user = isolated_agentcli_home / "config.toml"
    assert load_config(ws).get("max_steps") == 20
    write(user, 'model = "openai:user"\nmax_steps = 7\n')
    config = load_config(ws)
    assert (config.get("model"), config.source("model")) == ("openai:user", str(user))
    project = write(ws / ".agentcli/config.toml", 'model = "openai:project"\n')
    trust.set_trusted(ws, True)  # an untrusted project may not pick the model
    config = load_config(ws)
    assert (config.get("model"), config.source("model")) == ("openai:project", str(project))
    config = load_config(ws, env={"AGENTCLI_MODEL": "openai:env"})
    assert (config.get("model"), config.source("model")) == ("openai:env", "env AGENTCLI_MODEL")
    config = load_config(
        ws,
        env={"AGENTCLI_MODEL": "openai:env"},
        flags={"model": "openai:flag"},
        flag_labels={"model": "--model"},
    )
    assert (config.get("model"), config.source("model")) == ("openai:flag", "--model")
    assert config.get("max_steps") == 7


@pytest.mark.parametrize(
    "line",
    [
        'policy.allow = ["run_shell"]',
        "policy.yes = true",
        'providers.openai.base_url = "http://127.0.0.1:1/v1"',
        'providers.evil.api_key_env = "OTHER"',
        'shell.env = ["GITHUB_TOKEN"]',
        'shell.python = "/tmp/evil"',
        'mcp.servers.x.command = "evil"',
        'hooks.before = "evil"',
        'model = "anthropic:claude-sonnet-4-5"',  # another provider, another key
        'model = "openai:gpt-4o"',  # where data goes is the user's choice
    ],
)
def test_untrusted_project_cannot_loosen_anything(ws, line):
    write(ws / ".agentcli/config.toml", line + '\npolicy.deny = ["run_shell(rm *)"]\n')
    key = line.split(" = ")[0]
    config = load_config(ws)
    assert not config.trusted
    assert key in config.ignored
    assert config.get(key) in (None, [], False)
    assert config.rules("policy.deny")[0][0] == "run_shell(rm *)"  # tightening still applies
    trust.set_trusted(ws, True)
    trusted = load_config(ws)
    assert trusted.ignored == [] and trusted.get(key) not in (None, [], False)
    trust.set_trusted(ws, False)
    assert not load_config(ws).trusted


def test_the_ignored_notice_is_given_once_per_set_of_keys(ws):
    assert trust.first_notice(ws, ["policy.yes"])
    assert not trust.first_notice(ws, ["policy.yes"])
    assert trust.first_notice(ws, ["policy.yes", "shell.env"])


def test_rules_add_up_across_layers(ws, isolated_agentcli_home):
    write(isolated_agentcli_home / "config.toml", '[policy]\ndeny = ["a"]\n')
    write(ws / ".agentcli/config.toml", '[policy]\ndeny = ["b"]\n')
    assert [r for r, _ in load_config(ws).rules("policy.deny")] == ["a", "b"]


def test_bad_files_name_file_and_line(tmp_path):
    bad = write(tmp_path / "a.toml", "x = [\n")
    with pytest.raises(ConfigError, match=r"a.toml: invalid TOML: .*end of the file, line 1"):
        read_config_file(bad)
    middle = write(tmp_path / "m.toml", "a = 1\nb = = 2\nc = 3\n")
    with pytest.raises(ConfigError, match=r"m.toml: invalid TOML: .*line 2"):
        read_config_file(middle)
    typed = write(tmp_path / "b.toml", "# comment\n[tools]\nconcurrency = 'many'\n")
    with pytest.raises(ConfigError, match=r"b.toml, line 3: tools.concurrency must be an integer"):
        read_config_file(typed)
    unknown = write(tmp_path / "c.toml", "colour = 'red'\n")
    values, warnings = read_config_file(unknown)
    assert values == {"colour": "red"}
    assert warnings == [f"{unknown} (line 1): unknown setting 'colour' is ignored"]
    assert line_of("[a]\nb = 1\n[c]\nb = 2\n", "c.b") == 4


def test_config_set_keeps_comments_and_checks_values(tmp_path):
    path = write(tmp_path / "config.toml", "# my settings\nmax_steps = 5  # keep low\n")
    set_value(path, "policy.allow", '["read_file"]')
    set_value(path, "model", "openai:gpt-4o")
    text = path.read_text()
    assert "# my settings" in text and "# keep low" in text
    assert 'allow = ["read_file"]' in text and 'model = "openai:gpt-4o"' in text
    with pytest.raises(UsageError, match="unknown setting"):
        set_value(path, "colour", "red")
    with pytest.raises(UsageError, match="must be an integer"):
        set_value(path, "max_steps", "many")
    assert parse_value("true") is True and parse_value("plain words") == "plain words"


def calls(*ids: str) -> Message:
    return Message(role="assistant", tool_calls=[ToolCall(i, "read_file", "{}") for i in ids])


def test_repair_answers_every_dangling_call_in_place():
    recorded: list[Message] = []
    conversation = Conversation(
        [Message.user("hi"), calls("a", "b"), Message.tool_result("a", "fine")]
    )
    conversation.on_add = recorded.append
    assert conversation.repair() == 1
    roles = [(m.role, m.tool_call_id) for m in conversation.messages]
    assert roles == [("user", None), ("assistant", None), ("tool", "a"), ("tool", "b")]
    assert conversation.messages[-1].content == INTERRUPTED
    assert recorded == [conversation.messages[-1]]
    assert conversation.repair() == 0


def test_session_file_round_trip_and_truncated_line(tmp_path, ws):
    session = Session.create(ws, "openai:m")
    session.conversation.add(Message.user("hello"))
    session.handle(ev.TextMessageContent(message_id="m", delta="partial ans"))
    session.close()
    with open(session.path, "a") as stream:
        stream.write('{"t":"message","m":{"role":"us')  # a kill -9 in the middle of a write
    loaded = Session.load(session.path)
    assert len(loaded.warnings) == 1 and "last line" in loaded.warnings[0]
    messages = loaded.conversation.messages
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[1].content.startswith("partial ans") and "interrupted" in messages[1].content
    loaded.open_for_append()  # records the rebuilt partial answer
    loaded.close()
    entries = list(session_entries(loaded.path, []))
    assert [e.value.role for e in entries if e.kind == "message"] == ["user", "assistant"]


def test_split_point_keeps_the_latest_turns_and_never_splits_a_call():
    conversation = Conversation(
        [
            Message.user("one"),
            Message(role="assistant", content="a1"),
            Message.user("two"),
            calls("x"),
            Message.tool_result("x", "r"),
            Message(role="assistant", content="a2"),
            Message.user("three"),
        ]
    )
    assert split_point(conversation, keep_turns=1) == 6
    assert split_point(conversation, keep_turns=2) == 2
    long_turn = Conversation(
        [
            Message.user("go"),
            calls("a"),
            Message.tool_result("a", "r"),
            calls("b"),
            Message.tool_result("b", "r"),
            calls("c"),
            Message.tool_result("c", "r"),
        ]
    )
    point = split_point(long_turn, keep_turns=2)
    assert point is not None and long_turn.messages[point].role == "assistant"
    assert split_point(Conversation([Message.user("only")]), keep_turns=2) is None


class SummaryProvider:
    name, model = "fake", "fake"

    def __init__(self) -> None:
        self.requests = []

    async def stream(self, request):
        self.requests.append(request)
        yield ev.TextMessageContent(message_id="s", delta="SUMMARY")
        yield ev.StepEnd(finish_reason="stop")

    async def aclose(self) -> None:
        pass


def test_compaction_replaces_older_turns_with_a_summary():
    provider = SummaryProvider()
    seen: list[ev.Event] = []
    recorded: list[tuple[str, int]] = []
    compactor = Compactor(
        provider,
        window=100,
        threshold=0.5,
        keep_turns=1,
        emit=seen.append,
        on_compacted=lambda s, i: recorded.append((s, i)),
    )
    conversation = Conversation(
        [Message.user("x" * 400), Message(role="assistant", content="y"), Message.user("latest")]
    )
    assert compactor.needed("system", conversation, [])
    assert asyncio.run(compactor.compact(conversation))
    assert conversation.summary == "SUMMARY" and conversation.start == 2
    assert [m.content for m in conversation.visible()] == ["latest"]
    assert len(conversation.messages) == 3  # nothing is lost, only what is sent shrinks
    assert recorded == [("SUMMARY", 2)]
    assert seen[-1].name == "compaction" and seen[-1].value["summarisedMessages"] == 2
    assert "x" * 100 in provider.requests[0].messages[0].content
    assert "[tool result" in transcript([Message.tool_result("a", "r" * 5000)])


def test_instructions_from_workspace_and_parents_up_to_the_repository(tmp_path):
    repo = tmp_path / "repo"
    write(repo / ".git" / "HEAD", "ref")
    write(repo / "AGENTS.md", "repo rules")
    write(tmp_path / "AGENTS.md", "outside the repository: never read")
    ws = repo / "pkg"
    write(ws / "AGENTS.md", "package rules")
    write(ws / "CLAUDE.md", "claude rules")
    found = find_instructions(ws, ["AGENTS.md"])
    assert [f.text for f in found] == ["repo rules", "package rules"]
    assert [f.text for f in find_instructions(ws, ["CLAUDE.md"])] == ["claude rules"]
    alone = tmp_path / "alone"
    write(alone / "AGENTS.md", "alone rules")
    assert [f.text for f in find_instructions(alone, ["AGENTS.md"])] == ["alone rules"]
