"""list_directory, create_directory, write_file and edit_file on real files."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from agentcli.risk import Risk
from agentcli.tools.base import Tool, ToolContext, ToolFailure
from agentcli.tools.create_directory import CreateDirectory
from agentcli.tools.edit_file import EditFile
from agentcli.tools.list_directory import ListDirectory
from agentcli.tools.write_file import WriteFile
from agentcli.workspace.root import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "b.txt").write_text("bee\n")
    (root / "a.py").write_text("print('a')\n")
    (root / "src").mkdir()
    (root / ".hidden").write_text("h")
    return root


def ctx(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(root))


def run(tool: Tool, root: Path, **args):
    return asyncio.run(tool.execute(args, ctx(root)))


def risk(tool: Tool, root: Path, **args) -> tuple[Risk, str]:
    assessment = tool.assess(args, ctx(root))
    return assessment.risk, assessment.reason


# list_directory


def test_list_directory_sorted_dirs_first_with_size_and_time(ws):
    out = run(ListDirectory(), ws)
    lines = out.content.splitlines()
    assert lines[0] == ".: 3 entries (hidden not shown)"
    names = [line.split("  ")[-1] for line in lines[2:]]
    assert names == ["src/", "a.py", "b.txt"]
    assert lines[3].split()[1] == "11"  # bytes of a.py
    assert ".hidden" not in out.content
    assert ".hidden" in run(ListDirectory(), ws, include_hidden=True).content


def test_list_directory_errors_and_cap(ws, monkeypatch):
    with pytest.raises(ToolFailure, match="no such directory: nope"):
        run(ListDirectory(), ws, path="nope")
    with pytest.raises(ToolFailure, match="is a file"):
        run(ListDirectory(), ws, path="a.py")
    monkeypatch.setattr("agentcli.tools.list_directory.MAX_LIST_ENTRIES", 2)
    assert "[… 1 more entries not shown]" in run(ListDirectory(), ws).content
    (ws / "src" / "link").symlink_to("../a.py")
    assert "link -> ../a.py" in run(ListDirectory(), ws, path="src").content


# create_directory


def test_create_directory_recursive_and_not(ws):
    assert run(CreateDirectory(), ws, path="x/y/z").content == "created x/y/z/"
    assert (ws / "x/y/z").is_dir()
    assert "already exists" in run(CreateDirectory(), ws, path="x/y").content
    with pytest.raises(ToolFailure, match="parent of p/q does not exist"):
        run(CreateDirectory(), ws, path="p/q", recursive=False)
    with pytest.raises(ToolFailure, match="exists and is not a directory"):
        run(CreateDirectory(), ws, path="a.py")


# write_file


def test_write_file_creates_parents_and_reports_bytes(ws):
    out = run(WriteFile(), ws, path="new/dir/f.txt", content="héllo\n")
    assert out.content == "created new/dir/f.txt (7 bytes written)"
    assert (ws / "new/dir/f.txt").read_text() == "héllo\n"


def test_write_file_replaces_atomically_and_keeps_the_mode(ws):
    script = ws / "run.sh"
    script.write_text("old\n")
    script.chmod(0o750)
    out = run(WriteFile(), ws, path="run.sh", content="new\n")
    assert out.content.startswith("replaced run.sh")
    assert script.read_text() == "new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert not [p for p in os.listdir(ws) if "agentcli-tmp" in p]  # no temporary left over


def test_write_file_preview_is_a_diff_over_an_existing_file(ws):
    preview = WriteFile().preview({"path": "b.txt", "content": "bee\nsting\n"}, ctx(ws))
    assert "--- a/b.txt" in preview and "+sting" in preview
    new = WriteFile().preview({"path": "c.txt", "content": "abc"}, ctx(ws))
    assert new == "new file c.txt (1 line, 3 bytes)\n+abc\n"  # the content, every line
    new = WriteFile().preview({"path": "c.txt", "content": "a\fb\n\nc\n"}, ctx(ws))
    assert new.split("\n")[1:] == ["+a\fb", "+", "+c", ""]  # a form feed splits no line


def test_write_file_refuses_a_directory(ws):
    with pytest.raises(ToolFailure, match="is a directory"):
        run(WriteFile(), ws, path="src", content="x")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes everywhere")
def test_write_file_permission_denied(ws):
    locked = ws / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(ToolFailure, match="permission denied"):
            run(WriteFile(), ws, path="locked/f.txt", content="x")
    finally:
        locked.chmod(0o700)


# edit_file


def test_edit_file_replaces_one_exact_match_and_returns_a_diff(ws):
    (ws / "m.py").write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    out = run(EditFile(), ws, path="m.py", old_text="    return 1", new_text="    return 10")
    assert (ws / "m.py").read_text() == "def f():\n    return 10\n\ndef g():\n    return 2\n"
    assert "-    return 1\n+    return 10" in out.content
    assert out.summary == "2 lines changed"


def test_edit_file_errors_say_which(ws):
    (ws / "m.txt").write_text("x = 1\nx = 1\n  y = 2\n")
    with pytest.raises(ToolFailure, match=r"occurs 2 times in m.txt \(lines 1, 2\)"):
        run(EditFile(), ws, path="m.txt", old_text="x = 1", new_text="x = 3")
    with pytest.raises(ToolFailure, match=r"was not found in m\.txt; read"):
        run(EditFile(), ws, path="m.txt", old_text="zzz", new_text="y")
    with pytest.raises(ToolFailure, match="whitespace is ignored"):
        run(EditFile(), ws, path="m.txt", old_text="y  =  2", new_text="y = 3")
    with pytest.raises(ToolFailure, match=r"no such file: nope\.txt"):
        run(EditFile(), ws, path="nope.txt", old_text="a", new_text="b")
    with pytest.raises(ToolFailure, match="the same"):
        run(EditFile(), ws, path="m.txt", old_text="x", new_text="x")
    (ws / "bin.dat").write_bytes(b"\x00\x01abc")
    with pytest.raises(ToolFailure, match="binary"):
        run(EditFile(), ws, path="bin.dat", old_text="abc", new_text="d")
    run(EditFile(), ws, path="m.txt", old_text="x = 1", new_text="x = 3", replace_all=True)
    assert (ws / "m.txt").read_text() == "x = 3\nx = 3\n  y = 2\n"


def test_edit_keeps_crlf_line_endings_and_latin1_bytes(ws):
    crlf = b"one\r\ntwo\r\nthree\r\n"
    (ws / "win.txt").write_bytes(crlf)
    run(EditFile(), ws, path="win.txt", old_text="two\nthree", new_text="2\n3")
    assert (ws / "win.txt").read_bytes() == b"one\r\n2\r\n3\r\n"
    latin = "café = 'ñ'\nother = 1\n".encode("latin-1")
    (ws / "latin.py").write_bytes(latin)
    run(EditFile(), ws, path="latin.py", old_text="other = 1", new_text="other = 2")
    assert (ws / "latin.py").read_bytes() == latin.replace(b"other = 1", b"other = 2")
    with pytest.raises(ToolFailure, match="cannot hold"):
        run(EditFile(), ws, path="latin.py", old_text="other = 2", new_text="other = '€'")


def test_edit_keeps_a_bom(ws):
    (ws / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    run(EditFile(), ws, path="bom.txt", old_text="hello", new_text="bye")
    assert (ws / "bom.txt").read_bytes() == b"\xef\xbb\xbfbye\n"


def test_edit_preview_shows_the_diff_without_writing(ws):
    preview = EditFile().preview({"path": "b.txt", "old_text": "bee", "new_text": "wasp"}, ctx(ws))
    assert "-bee\n+wasp" in preview
    assert (ws / "b.txt").read_text() == "bee\n"


# confinement and sensitive targets


def test_write_risks(ws, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "agentcli-home"))
    assert risk(WriteFile(), ws, path="a.py", content="")[0] is Risk.MEDIUM
    assert risk(EditFile(), ws, path="a.py", old_text="a", new_text="b")[0] is Risk.MEDIUM
    assert risk(CreateDirectory(), ws, path="d")[0] is Risk.MEDIUM
    for path, why in [
        ("../elsewhere.txt", "outside the workspace"),
        ("/tmp/x.txt", "outside the workspace"),
        (".git/hooks/pre-commit", "hooks"),
        (".git/config", ".git/config"),
        ("sub/.git/hooks/post-checkout", "hooks"),
        (".bashrc", "shell start-up file"),
        (".env", "secrets"),
        ("config/.env.production", "secrets"),
        (".agentcli/config.toml", "agentcli's own configuration"),
        (str(tmp_path / "agentcli-home" / "config.toml"), "never written by a tool"),
    ]:
        level, reason = risk(WriteFile(), ws, path=path, content="")
        assert level is Risk.HIGH, path
        assert why in reason, (path, reason)
    assert risk(ListDirectory(), ws, path="..")[0] is Risk.HIGH
    # Anything below .git is where git reads from: a file tool writes it only when a person
    # approves that one call (commands may write git's objects, under the sandbox).
    assert risk(WriteFile(), ws, path=".git/HEAD.txt", content="")[0] is Risk.HIGH


@pytest.mark.parametrize(
    "path",
    [
        ".git/modules/sub/config",
        ".git/modules/sub/hooks/post-checkout",
        ".git/modules/a/modules/b/config",
        ".git/modules/a/modules/b/hooks/pre-commit",
        ".git/config.worktree",
        ".git/worktrees/w/config.worktree",
        "sub/.git",
    ],
)
def test_every_place_git_reads_code_or_configuration_from_is_sensitive(ws, path):
    assert risk(WriteFile(), ws, path=path, content="")[0] is Risk.HIGH


def test_sensitive_names_fold_case_only_where_the_file_system_does(ws, monkeypatch):
    import agentcli.workspace.sensitive as sensitive

    (ws / ".git").mkdir()
    # This file system tells `.GIT` from `.git`: git never reads `.GIT/config` here.
    assert not sensitive._folds_case(str(ws / ".git"))
    assert risk(WriteFile(), ws, path=".GIT/config", content="")[0] is Risk.MEDIUM
    monkeypatch.setattr(sensitive, "_folds_case", lambda directory: True)  # as on macOS
    for path in (".GIT/config", ".Git/Hooks/pre-commit", ".git/MODULES/x/CONFIG", ".BashRC"):
        assert risk(WriteFile(), ws, path=path, content="")[0] is Risk.HIGH, path


def test_agentcli_home_inside_the_workspace_is_sensitive(ws, monkeypatch):
    monkeypatch.setenv("AGENTCLI_HOME", str(ws / "home"))
    level, reason = risk(WriteFile(), ws, path="home/config.toml", content="")
    assert level is Risk.HIGH and "agentcli's own configuration" in reason


def test_reading_ssh_keys_is_high_even_inside_the_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_rsa").write_text("KEY")
    from agentcli.tools.read_file import ReadFile

    level, reason = risk(ReadFile(), tmp_path, path=".ssh/id_rsa")
    assert level is Risk.HIGH and ".ssh" in reason


def test_symlink_out_of_the_workspace_is_outside_for_writes(ws, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    (ws / "link.txt").symlink_to(outside)
    (ws / "linkdir").symlink_to(tmp_path)
    assert risk(WriteFile(), ws, path="link.txt", content="x")[0] is Risk.HIGH
    assert risk(WriteFile(), ws, path="linkdir/new.txt", content="x")[0] is Risk.HIGH
    assert risk(EditFile(), ws, path="link.txt", old_text="keep", new_text="x")[0] is Risk.HIGH


def test_a_parent_swapped_for_an_outside_symlink_after_resolution_is_refused(ws, tmp_path):
    from agentcli.tools.fs_write import write_at

    (ws / "dir").mkdir()
    resolved = Workspace(ws).resolve("dir/f.txt")
    assert resolved.inside
    (ws / "dir").rmdir()
    (ws / "dir").symlink_to(tmp_path)  # the race: dir now points out of the workspace
    with pytest.raises(ToolFailure, match="became a symbolic link"):
        write_at(resolved.path, Workspace(ws).root, "dir/f.txt", b"x")
    assert not (tmp_path / "f.txt").exists()
