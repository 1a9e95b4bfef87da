"""Agent Skills through the installed CLI, against the scripted model server: the model is
told each skill's name, description and SKILL.md (not its body); it reads a skill's files
with read_file wherever the skill lies, without asking; no tool writes a skill's folder,
not even with --yes; a skill's script runs through run_shell inside the sandbox, which
lets it read its folder and not write it; a project's skills count once it is trusted."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.sandbox.mechanisms import detect
from tests.conftest import RunCli, use_backend
from tests.scripted_server import Reply, ScriptedServer

FOUND = detect()
BACKENDS = [
    pytest.param(
        "landlock", marks=pytest.mark.skipif(not FOUND.landlock_abi, reason="no Landlock")
    ),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(not FOUND.bwrap, reason="no bubblewrap")),
]

SKILL = """---
name: {name}
description: {description}
license: MIT
---
# {name}

Read references/REFERENCE.md, then run scripts/run.py.
"""
REFERENCE = "The reference says: use --fast."


def make_skill(root: Path, name: str, description: str = "Does one thing well.") -> Path:
    folder = root / name
    (folder / "references").mkdir(parents=True)
    (folder / "scripts").mkdir()
    (folder / "SKILL.md").write_text(SKILL.format(name=name, description=description))
    (folder / "references" / "REFERENCE.md").write_text(REFERENCE)
    (folder / "scripts" / "run.py").write_text(
        "import pathlib, sys\n"
        "here = pathlib.Path(__file__).resolve().parent.parent\n"
        "print('ran from', here.name)\n"
        "try:\n"
        "    (here / 'written.txt').write_text('x')\n"
        "    print('wrote its folder')\n"
        "except OSError as error:\n"
        "    print('could not write its folder:', error.strerror)\n"
    )
    return folder


def calls(*specs: tuple[str, dict]) -> Reply:
    return Reply.tool_calls(
        [{"id": f"c{i}", "name": name, "arguments": args} for i, (name, args) in enumerate(specs)]
    )


def results(server: ScriptedServer) -> dict[str, str]:
    messages = server.requests[-1].json["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m.get("role") == "tool"}


def system_prompt(server: ScriptedServer) -> str:
    return server.requests[0].json["messages"][0]["content"]


def test_the_model_is_told_each_skill_and_reads_one_outside_the_workspace_unasked(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    """No --yes and no terminal: anything that asked would be refused. The user's skills,
    beside the configuration and in Claude Code's folder, are read as the workspace is."""
    own = make_skill(cli_home / "agentcli" / "skills", "pdf-tools", "Works with PDF files.")
    make_skill(cli_home / ".claude" / "skills", "release-notes", "Writes release notes.")
    server.enqueue(
        calls(
            ("read_file", {"path": str(own / "SKILL.md")}),
            ("read_file", {"path": str(own / "references" / "REFERENCE.md")}),
            ("list_directory", {"path": str(own)}),
        ),
        Reply.text(["done"]),
    )
    result = run_cli(["run", "make a PDF"], server=server)
    assert result.returncode == 0, result.stderr
    prompt = system_prompt(server)
    assert "<name>pdf-tools</name>" in prompt and "Works with PDF files." in prompt
    assert f"<location>{own.resolve()}/SKILL.md</location>" in prompt
    assert "<name>release-notes</name>" in prompt
    assert "Read references/REFERENCE.md" not in prompt  # the body only when read
    got = results(server)
    assert "Read references/REFERENCE.md, then run scripts/run.py." in got["c0"]
    assert REFERENCE in got["c1"]
    assert "scripts" in got["c2"] and "references" in got["c2"]


def test_no_tool_writes_a_skills_folder_even_with_yes(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    """A project's skill inside the workspace (which --yes lets tools write) and a user's
    outside it: writing, editing or adding a file in either is refused, and nothing there
    changes."""
    assert run_cli(["trust"]).returncode == 0
    project = make_skill(workspace / ".agents" / "skills", "lint")
    user = make_skill(cli_home / ".claude" / "skills", "deploy")
    before = (project / "SKILL.md").read_text()
    server.enqueue(
        calls(
            ("write_file", {"path": ".agents/skills/lint/SKILL.md", "content": "taken over"}),
            (
                "edit_file",
                {"path": ".agents/skills/lint/SKILL.md", "old_text": "lint", "new_text": "x"},
            ),
            ("write_file", {"path": ".agents/skills/lint/scripts/new.py", "content": "x"}),
            ("write_file", {"path": str(user / "SKILL.md"), "content": "taken over"}),
            ("write_file", {"path": "notes-copy.txt", "content": "fine"}),
        ),
        Reply.text(["done"]),
    )
    result = run_cli(["run", "--yes", "change the skills"], server=server)
    got = results(server)
    for call in ("c0", "c1", "c2", "c3"):
        assert "a skill's folder" in got[call] and "never write" in got[call], got[call]
    assert (project / "SKILL.md").read_text() == before
    assert not (project / "scripts" / "new.py").exists()
    assert "taken over" not in (user / "SKILL.md").read_text()
    assert (workspace / "notes-copy.txt").read_text() == "fine"  # the workspace itself: yes
    assert result.returncode != 0  # refusals make the run's exit code say so


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_skills_script_runs_in_the_sandbox_reading_its_folder_never_writing_it(
    backend: str, run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    use_backend(cli_home, backend)
    folder = make_skill(cli_home / ".claude" / "skills", "hello")
    server.enqueue(
        calls(("run_shell", {"command": f"python3 {folder}/scripts/run.py"})),
        Reply.text(["done"]),
    )
    result = run_cli(["run", "--yes", "say hello"], server=server)
    assert result.returncode == 0, result.stderr
    output = results(server)["c0"]
    assert "ran from hello" in output, output
    assert "could not write its folder" in output, output
    assert not (folder / "written.txt").exists()


def test_a_projects_skills_count_only_once_the_workspace_is_trusted(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    make_skill(workspace / ".agents" / "skills", "house-style", "Applies the house style.")
    make_skill(workspace / ".claude" / "skills", "old-style", "Applies the old style.")
    server.enqueue(Reply.text(["ok"]))
    assert run_cli(["run", "hi"], server=server).returncode == 0
    assert "<available_skills>" not in system_prompt(server)

    assert run_cli(["trust"]).returncode == 0
    server.requests.clear()
    server.enqueue(Reply.text(["ok"]))
    assert run_cli(["run", "hi"], server=server).returncode == 0
    prompt = system_prompt(server)
    assert "<location>.agents/skills/house-style/SKILL.md</location>" in prompt
    assert "<location>.claude/skills/old-style/SKILL.md</location>" in prompt
