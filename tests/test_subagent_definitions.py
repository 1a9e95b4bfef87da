"""Subagent definitions read as Claude Code and opencode write them: the fields each takes,
what a file that cannot be one says, and where they are found."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.habits.front_matter import FrontMatterError
from agentcli.habits.places import Folder
from agentcli.habits.subagents import GENERAL, find_subagents, read_definition

FOLDER = Folder(Path("."), ".claude/agents", True)


def definition(tmp_path: Path, text: str, name: str = "x.md"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_definition(path, FOLDER)


def test_claude_codes_fields(tmp_path: Path) -> None:
    found = definition(
        tmp_path,
        "---\nname: code-reviewer\ndescription: Reviews code.\ntools: Read, Grep, Bash(git diff:*)"
        "\ndisallowedTools: Write\nmodel: haiku\nmaxTurns: 5\ncolor: cyan\n---\nReview.\n",
    )
    assert found is not None
    assert (found.name, found.description, found.prompt) == (
        "code-reviewer",
        "Reviews code.",
        "Review.",
    )
    assert found.tools == ("Read", "Grep", "Bash(git diff:*)")
    assert found.disallowed == ("Write",)
    assert found.model is None  # Claude Code's alias: the session's model
    assert found.max_steps == 5


def test_opencodes_fields(tmp_path: Path) -> None:
    found = definition(
        tmp_path,
        "---\ndescription: Plans.\nmodel: anthropic/claude-sonnet-4\ntools:\n  write: false\n"
        "  bash: false\n  read: true\n---\nPlan.\n",
        "planner.md",
    )
    assert found is not None
    assert found.name == "planner"  # the file's name
    assert found.model == "anthropic:claude-sonnet-4"
    assert found.tools is None and found.disallowed == ("write_file", "run_shell")
    primary = "---\ndescription: Builds.\nmode: primary\n---\n"
    assert definition(tmp_path, primary) is None
    assert definition(tmp_path, "---\ndescription: d\ndisabled: true\n---\n") is None


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("no front matter", "does not start with YAML front matter"),
        ("---\nname: Big\ndescription: d\n---\n", "name 'Big' must be lowercase"),
        ("---\nname: ok\n---\n", "it has no description"),
        ("---\ndescription: d\nmaxTurns: 0\n---\n", "maxTurns must be a whole number"),
        ("---\ndescription: d\ntools:\n  write: maybe\n---\n", "tools.write must be true or false"),
    ],
)
def test_a_file_that_cannot_be_one_says_why(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(FrontMatterError, match=said):
        definition(tmp_path, text)


def test_found_in_the_project_once_trusted_first_name_wins_general_purpose_built_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "agentcli"))
    for folder in (".agentcli/agents", ".claude/agents"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "same.md").write_text(f"---\ndescription: from {folder}\n---\n")
    untrusted = find_subagents(tmp_path, trusted=False)
    assert list(untrusted.found) == [GENERAL]
    assert untrusted.untrusted == [".agentcli/agents", ".claude/agents"]
    trusted = find_subagents(tmp_path, trusted=True)
    assert list(trusted.found) == ["same", GENERAL]
    assert trusted.found["same"].description == "from .agentcli/agents"
    [skipped] = trusted.skipped
    assert skipped.path == ".claude/agents/same.md"
    assert "from .agentcli/agents is used instead" in skipped.why


def test_a_session_cut_while_a_subagent_spoke_keeps_only_the_parents_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process died while the subagent streamed its answer: a resumed session keeps
    what the parent's model had said (marked), never the subagent's words as the parent's."""
    from agentcli.conversation import events as ev
    from agentcli.conversation.messages import Message
    from agentcli.output.base import FanOut
    from agentcli.output.nested import NestedOutput
    from agentcli.sessions.session import Session

    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "agentcli"))
    session = Session.create(tmp_path, "m")
    session.conversation.add(Message.user("go"))
    parent = FanOut([session])
    parent(ev.StepStarted(step_name="step-1"))
    parent(ev.TextMessageStart(message_id="p1"))
    parent(ev.TextMessageContent(message_id="p1", delta="Let me ask a helper. "))
    nested = NestedOutput(parent, "run_parent", "t1", "reader", "run_child")
    nested.handle(ev.RunStarted(thread_id="th", run_id="run_child"))
    nested.handle(ev.StepStarted(step_name="step-1"))
    nested.handle(ev.TextMessageStart(message_id="c1"))
    nested.handle(ev.TextMessageContent(message_id="c1", delta="the subagent's words"))
    session.close()  # the process ends here

    loaded = Session.load(session.path)
    said = [m.content for m in loaded.conversation.messages]
    assert said == ["go", "Let me ask a helper. \n[the answer was interrupted here]"]
