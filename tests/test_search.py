"""search_files and search_content on real files, with both backends.

Most tests run twice, once with ripgrep and once with the pure-Python fallback (the
`backend` fixture); the parity tests at the end compare the two outputs byte for byte."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from agentcli.agent.executor import Executor
from agentcli.conversation.messages import ToolCall
from agentcli.policy.engine import Policy
from agentcli.risk import Risk
from agentcli.tools import search_py, search_rg
from agentcli.tools.base import ToolContext, ToolFailure, ToolOutput
from agentcli.tools.registry import ToolRegistry
from agentcli.tools.search import MAX_FILES, SearchContent, SearchFiles
from agentcli.tools.search_rg import BACKEND_ENV, find_ripgrep
from agentcli.workspace.root import Workspace

RG = find_ripgrep()
BACKENDS = [
    pytest.param(
        "ripgrep", marks=pytest.mark.skipif(RG is None, reason="ripgrep (`rg`) is not installed")
    ),
    "python",
]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(BACKEND_ENV, request.param)
    return request.param


def write(root: Path, rel: str, content: str | bytes = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A project with nested .gitignore files (negations too), .git, hidden files."""
    root = tmp_path / "proj"
    write(root, ".gitignore", "*.log\nbuild/\n!keep.log\n")
    write(root, ".git/config", "needle in git\n")
    write(root, ".git/HEAD", "ref: refs/heads/main\n")
    write(root, ".hidden/secret.txt", "needle hidden\n")
    write(root, ".env", "NEEDLE=1\n")
    write(root, "README.md", "# Demo\nno match here\n")
    write(root, "app.log", "needle in an ignored log\n")
    write(root, "keep.log", "needle kept by a negation\n")
    write(root, "build/out.txt", "needle in an ignored dir\n")
    write(root, "src/.gitignore", "generated/\n*.tmp\n!important.log\n")
    write(root, "src/main.py", "import os\n\n\ndef main():\n    return needle()\n")
    write(root, "src/important.log", "needle re-included below\n")
    write(root, "src/generated/gen.py", "needle generated\n")
    write(root, "src/scratch.tmp", "needle tmp\n")
    write(root, "src/sub/util.py", "def needle():\n    return 42\n")
    write(root, "docs/guide.md", "Guide\nthe needle is here\n")
    return root


def call(tool: Any, root: Path, **args: Any) -> ToolOutput:
    ctx = ToolContext(workspace=Workspace(root))
    # As the executor does when a person approved the call: a call approved as one
    # outside the workspace may go there, and beyond the boundary only to that one path.
    assessment = tool.assess(args, ctx)
    ctx.confine = not assessment.protected
    if assessment.outside is not None:
        ctx.grant = Path(assessment.outside.place)
    return asyncio.run(tool.execute(args, ctx))


def find(root: Path, pattern: str, **args: Any) -> ToolOutput:
    return call(SearchFiles(), root, pattern=pattern, **args)


def grep(root: Path, pattern: str, **args: Any) -> ToolOutput:
    return call(SearchContent(), root, pattern=pattern, **args)


def listed(out: ToolOutput) -> list[str]:
    return out.content.splitlines()


def match_lines(out: ToolOutput) -> list[str]:
    return out.content.splitlines()[1:]  # after the header


# --- search_files ------------------------------------------------------------------------


def test_files_honour_nested_gitignore_skip_git_and_include_hidden(ws, backend):
    out = find(ws, "**/*")
    assert listed(out) == [
        ".env",
        ".gitignore",
        ".hidden/secret.txt",
        "README.md",
        "docs/guide.md",
        "keep.log",  # `!keep.log` re-includes it
        "src/.gitignore",
        "src/important.log",  # re-included by the nested .gitignore
        "src/main.py",
        "src/sub/util.py",
    ]
    assert out.summary == "10 files" and not out.error


def test_glob_semantics_follow_ripgrep(ws, backend):
    write(ws, "src/sub/deeper/more.py")
    assert listed(find(ws, "*.py")) == ["src/main.py", "src/sub/deeper/more.py", "src/sub/util.py"]
    assert listed(find(ws, "**/*.py")) == listed(find(ws, "*.py"))
    assert listed(find(ws, "src/*.py")) == ["src/main.py"]  # anchored: directly in src
    assert listed(find(ws, "src/**/*.py"))[-1] == "src/sub/util.py"
    assert listed(find(ws, "*.{md,tmp}")) == ["README.md", "docs/guide.md"]
    assert listed(find(ws, "/README.md")) == ["README.md"]
    # A glob that matches ignored files does not bring them back (unlike `rg -g`).
    assert listed(find(ws, "*.log")) == ["keep.log", "src/important.log"]
    assert find(ws, "build/**").summary == "no files"


def test_files_path_parameter_and_root_anchored_globs(ws, backend):
    assert listed(find(ws, "*.py", path="src/sub")) == ["src/sub/util.py"]
    assert listed(find(ws, "src/sub/*.py", path="src")) == ["src/sub/util.py"]
    out = find(ws, "sub/*.py", path="src")  # anchored at the workspace root: no match
    assert out.content.startswith("No files match 'sub/*.py' in src.")
    assert "'src/**/util.py'" not in out.content and "src/**/*.py" in out.content
    # The root .gitignore applies when searching a subdirectory.
    write(ws, "src/sub/trace.log", "x")
    assert listed(find(ws, "*", path="src/sub")) == ["src/sub/util.py"]


def test_no_files_match_is_not_an_error(ws, backend):
    out = find(ws, "**/*.rs")
    assert not out.error
    assert out.content == "No files match '**/*.rs' in the workspace."
    assert out.summary == "no files"


@pytest.fixture(scope="module")
def many_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("many")
    for d in range(7):
        (root / f"d{d}").mkdir()
    for i in range(MAX_FILES + 5):
        (root / f"d{i % 7}" / f"f{i:04}.txt").touch()
    return root


def test_files_are_capped_with_a_note(many_files, backend):
    out = find(many_files, "*.txt")
    lines = listed(out)
    assert len(lines) == MAX_FILES + 1
    assert lines[0] == "d0/f0000.txt" and lines[MAX_FILES - 1].startswith("d6/")
    assert lines[-1].startswith(f"[5 more files not shown; {MAX_FILES + 5} match in all.")
    assert out.summary == f"{MAX_FILES + 5} files"


def test_symlinks_are_not_followed(ws, tmp_path, backend):
    outside = tmp_path / "outside"
    write(outside, "leak.py", "needle outside\n")
    (ws / "linkdir").symlink_to(ws / "src" / "sub")
    (ws / "outlink").symlink_to(outside)
    (ws / "src" / "alias.py").symlink_to(ws / "src" / "main.py")
    (ws / "escape.py").symlink_to(outside / "leak.py")
    files = listed(find(ws, "**/*.py"))
    assert files == ["src/main.py", "src/sub/util.py"]
    text = grep(ws, "needle").content
    assert "leak" not in text and "alias" not in text and "linkdir" not in text
    # A symlinked directory named as `path` resolves first: results are real paths.
    assert listed(find(ws, "*.py", path="linkdir")) == ["src/sub/util.py"]


def test_files_errors(ws, backend):
    with pytest.raises(ToolFailure, match="is a file; search_files needs a directory"):
        find(ws, "*", path="README.md")
    with pytest.raises(ToolFailure, match="no such file or directory: nope"):
        find(ws, "*", path="nope")
    with pytest.raises(ToolFailure, match=r"invalid glob 'src/\[a-': unclosed character class"):
        find(ws, "src/[a-")
    with pytest.raises(ToolFailure, match="nested alternate groups"):
        find(ws, "*.{a,{b,c}}")


def test_paths_outside_the_workspace_are_high_risk(ws, tmp_path, backend):
    write(tmp_path, "elsewhere/x.py", "needle\n")
    ctx = ToolContext(workspace=Workspace(ws))
    for tool in (SearchFiles(), SearchContent()):
        assert tool.assess({"pattern": "x"}, ctx).risk is Risk.LOW
        assert tool.assess({"pattern": "x", "path": "src"}, ctx).risk is Risk.LOW
        high = tool.assess({"pattern": "x", "path": "../elsewhere"}, ctx)
        assert high.risk is Risk.HIGH
        assert "elsewhere is outside the workspace" in high.reason
        assert high.outside is not None  # beyond the boundary: only a person lets it
        assert tool.assess({"pattern": "x", "path": "/etc"}, ctx).risk is Risk.HIGH
    # Once approved, results outside are shown with absolute paths.
    shown = str(tmp_path / "elsewhere" / "x.py")
    assert listed(find(ws, "*.py", path="../elsewhere")) == [shown]
    assert match_lines(grep(ws, "needle", path="../elsewhere")) == [f"{shown}:1:needle"]


@pytest.mark.parametrize(
    "glob", ["../*.txt", "../**", "/../*", "src/../../*", "{..,src}/*", "!../x", "**/../../*"]
)
def test_a_glob_cannot_climb_out_with_dot_dot(ws, tmp_path, backend, glob):
    write(tmp_path, "secret.txt", "needle secret\n")
    for out in (
        lambda: find(ws, glob),
        lambda: grep(ws, "needle", glob=glob),
        lambda: grep(ws, "needle", glob=glob, path="src"),
    ):
        with pytest.raises(ToolFailure, match=r"`\.\.` is not allowed in a glob"):
            out()


def test_a_search_approved_inside_does_not_follow_its_path_out(ws, tmp_path, backend):
    write(tmp_path, "elsewhere/x.py", "needle\n")
    (ws / "link").symlink_to(tmp_path / "elsewhere")
    ctx = ToolContext(workspace=Workspace(ws))  # as approved: inside the workspace
    for tool in (SearchFiles(), SearchContent()):
        with pytest.raises(ToolFailure, match="is outside the workspace"):
            asyncio.run(tool.execute({"pattern": "needle", "path": "link"}, ctx))


# --- search_content ----------------------------------------------------------------------


def test_content_format_counts_and_ignore_rules(ws, backend):
    out = grep(ws, "needle")
    assert out.content.splitlines() == [
        "6 matches in 6 files",
        ".hidden/secret.txt:1:needle hidden",
        "docs/guide.md:2:the needle is here",
        "keep.log:1:needle kept by a negation",
        "src/important.log:1:needle re-included below",
        "src/main.py:5:    return needle()",
        "src/sub/util.py:1:def needle():",
    ]
    assert out.summary == "6 matches in 6 files" and not out.error


def test_context_lines_and_separators(tmp_path, backend):
    write(tmp_path, "a.txt", "".join(f"line {i}\n" for i in range(1, 13)))
    write(tmp_path, "b.txt", "x\nhit\n")
    out = grep(tmp_path, r"line (2|4|10)$|hit", context=1)
    assert match_lines(out) == [
        "a.txt-1-line 1",
        "a.txt:2:line 2",
        "a.txt-3-line 3",  # groups closer than 2*context merge
        "a.txt:4:line 4",
        "a.txt-5-line 5",
        "--",
        "a.txt-9-line 9",
        "a.txt:10:line 10",
        "a.txt-11-line 11",
        "--",
        "b.txt-1-x",
        "b.txt:2:hit",
    ]
    # Without context there are no separators.
    assert "--" not in grep(tmp_path, "line", max_results=20).content.splitlines()


def test_ignore_case(ws, backend):
    only_env = grep(ws, "NEEDLE")  # only .env has it: its lines may be secrets, not shown
    assert only_env.summary == "no matches"
    assert "may hold secrets (.env); read one with read_file" in only_env.content
    assert grep(ws, "NEEDLE", ignore_case=True).summary == "6 matches in 6 files"


def test_glob_filter(ws, backend):
    out = grep(ws, "needle", glob="*.py")
    assert match_lines(out) == [
        "src/main.py:5:    return needle()",
        "src/sub/util.py:1:def needle():",
    ]
    assert grep(ws, "needle", glob="src/*.py").summary == "1 match in 1 file"
    assert grep(ws, "needle", glob="!*.py").summary == "4 matches in 4 files"
    # The glob filters; it never re-includes ignored files.
    assert [line.split(":")[0] for line in match_lines(grep(ws, "needle", glob="*.log"))] == [
        "keep.log",
        "src/important.log",
    ]
    out = grep(ws, "needle", glob="*.rs")
    assert out.content == "No matches for 'needle' in the workspace (files matching '*.rs')."


def test_path_to_a_file_or_directory(ws, backend):
    assert match_lines(grep(ws, "needle", path="src/sub/util.py")) == [
        "src/sub/util.py:1:def needle():"
    ]
    # A file named explicitly is searched even if .gitignore lists it (like ripgrep).
    assert grep(ws, "needle", path="app.log").summary == "1 match in 1 file"
    assert grep(ws, "needle", path="src").summary == "3 matches in 3 files"
    with pytest.raises(ToolFailure, match="no such file or directory"):
        grep(ws, "needle", path="missing.py")


def test_binary_files_are_skipped(tmp_path, backend):
    write(tmp_path, "text.txt", "needle\n")
    write(tmp_path, "image.bin", b"\x89PNG\x00\x00needle\n")
    write(tmp_path, "late.bin", b"needle\n" + b"x" * 20_000 + b"\x00tail\n")  # NUL after 8 KB
    out = grep(tmp_path, "needle")
    assert match_lines(out) == ["text.txt:1:needle"]
    assert grep(tmp_path, "needle", path="late.bin").content == (
        "No matches for 'needle' in late.bin. It is a binary file (it has NUL bytes); "
        "binary files are not searched."
    )
    # search_files lists binary files; only content search skips them.
    assert listed(find(tmp_path, "*.bin")) == ["image.bin", "late.bin"]


def test_bad_regex_is_a_clear_error_and_python_only_syntax_works(ws, backend):
    with pytest.raises(ToolFailure, match=r"invalid regular expression 'foo\(': missing \)"):
        grep(ws, "foo(")
    with pytest.raises(ToolFailure, match="newline"):
        grep(ws, "a\nb")
    # ripgrep rejects look-around and backreferences; Python's re runs them instead.
    out = grep(ws, r"(?<=return )needle(?=\(\))")
    assert match_lines(out) == ["src/main.py:5:    return needle()"]
    write(ws, "twice.txt", "abab\nabba\n")
    assert match_lines(grep(ws, r"(ab)\1")) == ["twice.txt:1:abab"]


def test_no_match_is_a_normal_result(ws, backend):
    out = grep(ws, "haystack", path="src")
    assert not out.error
    assert out.content == "No matches for 'haystack' in src."
    assert out.summary == "no matches"


def test_max_results_cap_and_note(tmp_path, backend):
    write(tmp_path, "a.txt", "hit\n" * 150)
    write(tmp_path, "b.txt", "hit\n" * 10)
    out = grep(tmp_path, "hit")
    lines = out.content.splitlines()
    assert lines[0] == "160 matches in 2 files (showing the first 100)"
    assert len(lines) == 1 + 100 + 1 and lines[100] == "a.txt:100:hit"
    assert lines[-1].startswith("[60 more matching lines not shown (max_results=100)")
    assert out.summary == "160 matches in 2 files"
    out = grep(tmp_path, "hit", max_results=152)
    assert out.content.splitlines()[-2] == "b.txt:2:hit"


def test_cap_cuts_context_at_the_next_match(tmp_path, backend):
    write(tmp_path, "a.txt", "hit 1\nfiller\nhit 3\nfiller\nfiller\nhit 6\n")
    out = grep(tmp_path, "hit", context=2, max_results=2)
    assert match_lines(out)[:-1] == [
        "a.txt:1:hit 1",
        "a.txt-2-filler",
        "a.txt:3:hit 3",
        "a.txt-4-filler",  # after-context stops before the first match not shown
        "a.txt-5-filler",
    ]


def test_patterns_starting_with_a_dash(tmp_path, backend):
    write(tmp_path, "cli.txt", "run --verbose\nrun -v\n-x\n")
    assert match_lines(grep(tmp_path, "--verbose")) == ["cli.txt:1:run --verbose"]
    assert match_lines(grep(tmp_path, "-v$")) == ["cli.txt:2:run -v"]
    assert match_lines(grep(tmp_path, "-x")) == ["cli.txt:3:-x"]


def test_non_utf8_is_decoded_lossily(tmp_path, backend):
    write(tmp_path, "latin1.txt", b"caf\xe9 au lait\nplain\r\n")
    write(tmp_path, "crlf.txt", b"windows line\r\nnext\r\n")
    assert match_lines(grep(tmp_path, "au lait")) == ["latin1.txt:1:caf\ufffd au lait"]
    assert match_lines(grep(tmp_path, "line")) == ["crlf.txt:1:windows line"]


def test_long_lines_are_cut_around_the_match(tmp_path, backend):
    write(tmp_path, "min.js", "a" * 3000 + "NEEDLE" + "b" * 3000 + "\n" + "c" * 600 + "\n")
    first, second = match_lines(grep(tmp_path, "NEEDLE|^c"))
    assert first.startswith("min.js:1:[…] " + "a" * 100 + "NEEDLE")
    assert first.endswith(" [… line truncated]") and len(first) < 600
    assert second == "min.js:2:" + "c" * 500 + " [… line truncated]"


def test_output_cap_notes_truncation(tmp_path, monkeypatch):
    if RG is None:
        pytest.skip("ripgrep (`rg`) is not installed")
    monkeypatch.setenv(BACKEND_ENV, "ripgrep")
    monkeypatch.setattr(search_rg, "RG_OUTPUT_LIMIT", 4000)
    for i in range(30):
        write(tmp_path, f"f{i:02}.txt", "hit\n" * 5)
    out = grep(tmp_path, "hit")
    assert "was cut off, so results are incomplete" in out.content.splitlines()[0]


def test_ripgrep_gets_no_secrets_and_no_shell(tmp_path, monkeypatch):
    """A stand-in `rg` records its environment and arguments."""
    record = tmp_path / "record.txt"
    fake = write(
        tmp_path,
        "bin/rg",
        f'#!/bin/sh\nenv > {record}\nfor a in "$@"; do echo "ARG:$a" >> {record}; done\nexit 1\n',
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(search_rg, "find_ripgrep", lambda: str(fake))
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    root = tmp_path / "proj"
    write(root, "a.txt", "x\n")
    out = grep(root, "-e; echo pwned", glob="*.txt")
    assert out.content.startswith("No matches")
    text = record.read_text()
    assert "sk-secret" not in text and "ghp-secret" not in text and "LANG=C.UTF-8" in text
    names = {line.split("=")[0] for line in text.splitlines() if "=" in line and "ARG:" not in line}
    assert names <= {"PATH", "HOME", "LANG", "LC_ALL", "PWD", "SHLVL", "_", "OLDPWD"}
    assert "ARG:-e\nARG:-e; echo pwned\nARG:--\nARG:.\n" in text


def test_backend_switch_by_environment(ws, monkeypatch):
    monkeypatch.setattr(search_rg, "find_ripgrep", lambda: pytest.fail("ripgrep was looked up"))
    monkeypatch.setenv(BACKEND_ENV, "python")
    assert grep(ws, "needle").summary == "6 matches in 6 files"


def _recording_rg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in `rg` that records where it runs, then runs the real one."""
    record = tmp_path / "rg-calls.txt"
    fake = write(tmp_path, "bin/rg", f'#!/bin/sh\npwd -P >> {record}\nexec {RG} "$@"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(search_rg, "find_ripgrep", lambda: str(fake))
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    return record


def test_ripgrep_searches_a_subdirectory_from_inside_it(ws, tmp_path, monkeypatch):
    """A subdirectory (or a file) is searched by ripgrep run in it (the directory opened,
    no path it would resolve again), with the ignore rules above it passed along."""
    if RG is None:
        pytest.skip("ripgrep (`rg`) is not installed")
    record = _recording_rg(tmp_path, monkeypatch)
    write(ws, "src/sub/deep/x.log", "needle in a log the root ignores\n")
    write(ws, "src/sub/deep/y.txt", "needle\n")
    out = grep(ws, "needle", path="src/sub")
    assert match_lines(out) == ["src/sub/deep/y.txt:1:needle", "src/sub/util.py:1:def needle():"]
    assert listed(find(ws, "*.txt", path="src/sub")) == ["src/sub/deep/y.txt"]
    # One file: opened here and given to ripgrep as its standard input, in its directory
    assert match_lines(grep(ws, "needle", path="src/sub/util.py")) == [
        "src/sub/util.py:1:def needle():"
    ]
    assert record.read_text().splitlines() == [str((ws / "src/sub").resolve())] * 3


def test_rules_above_with_recursion_and_alternates_reach_ripgrep_rewritten(
    ws, tmp_path, monkeypatch
):
    """`**`, `{a,b}` and escapes above a searched subdirectory: ripgrep, run inside it, is
    given them rewritten (no walk in Python)."""
    if RG is None:
        pytest.skip("ripgrep (`rg`) is not installed")
    record = _recording_rg(tmp_path, monkeypatch)
    monkeypatch.setattr(search_py, "PinnedTree", None)  # the walk would fail
    write(ws, ".gitignore", "*.log\nbuild/\n!keep.log\n**/sub/*.py\n{src,lib}/**/*.md\n")
    write(ws, "src/.gitignore", "s\\*b/**/x.txt\n")
    write(ws, "src/sub/deep/notes.md", "needle in markdown\n")
    write(ws, "src/sub/deep/y.txt", "needle\n")
    write(ws, "src/s*b/in/x.txt", "needle behind a star\n")
    write(ws, "src/s*b/in/y.txt", "needle\n")
    out = grep(ws, "needle", path="src/sub")
    assert match_lines(out) == ["src/sub/deep/y.txt:1:needle"]  # util.py, notes.md ignored
    assert listed(find(ws, "**", path="src/s*b/in")) == ["src/s*b/in/y.txt"]
    assert record.read_text().splitlines() == [
        str((ws / "src/sub").resolve()),
        str((ws / "src/s*b/in").resolve()),
    ]


def test_a_rule_that_would_write_out_too_far_is_walked_instead(ws, tmp_path, monkeypatch):
    """Nine `[!x]` inside a name could each be a `/`: 512 rewritten lines. Past
    MAX_WRITTEN_OUT the search of that subdirectory is walked (bounded work for a hostile
    `.gitignore`), with the same result; one class fewer is still rewritten for ripgrep."""
    from agentcli.tools.ignore_rebase import MAX_WRITTEN_OUT

    if RG is None:
        pytest.skip("ripgrep (`rg`) is not installed")
    assert 2**8 <= MAX_WRITTEN_OUT < 2**9
    record = _recording_rg(tmp_path, monkeypatch)
    write(ws, "src/sub/deep/y.txt", "needle\n")
    for classes, ripgrep_ran in ((9, False), (8, True)):
        rule = "**/deep/" + "y[!x]" * classes + "y"
        write(ws, ".gitignore", f"*.log\nbuild/\n!keep.log\n{rule}\n**/deep/*.txt\n")
        out = grep(ws, "needle", path="src/sub")
        assert match_lines(out) == ["src/sub/util.py:1:def needle():"]
        assert record.exists() == ripgrep_ran


def test_the_walk_serves_only_without_ripgrep(ws, monkeypatch):
    """With ripgrep installed, every search (a subdirectory under rules with `**`, a glob,
    a regular expression only Python accepts) is listed by ripgrep, never walked."""
    if RG is None:
        pytest.skip("ripgrep (`rg`) is not installed")
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    write(ws, "src/.gitignore", "generated/\n*.tmp\n!important.log\n**/deep/**/*.py\n")
    write(ws, "src/sub/deep/er/hidden.py", "needle()\n")
    monkeypatch.setattr(search_py, "PinnedTree", None)  # the walk would fail
    # hidden.py is ignored from above by a `**` rule; util.py matches
    assert match_lines(grep(ws, r"needle(?=\()", path="src/sub")) == [
        "src/sub/util.py:1:def needle():"
    ]
    assert match_lines(grep(ws, r"(e)\1dle", glob="src/**")) == [
        "src/important.log:1:needle re-included below",
        "src/main.py:5:    return needle()",
        "src/sub/util.py:1:def needle():",
    ]
    assert listed(find(ws, "*.py", path="src/sub")) == ["src/sub/util.py"]


def test_look_around_searches_the_files_ripgrep_lists(ws, tmp_path, monkeypatch):
    if RG is None:
        pytest.skip("ripgrep (`rg`) is not installed")
    record = _recording_rg(tmp_path, monkeypatch)
    out = grep(ws, "(?<!def )needle")
    # ignored files stay out (app.log, build/, generated/, scratch.tmp); hidden ones are in
    assert [line.split(":")[0] for line in match_lines(out)] == [
        ".hidden/secret.txt",
        "docs/guide.md",
        "keep.log",
        "src/important.log",
        "src/main.py",
    ]
    # ripgrep refused the pattern, then listed the files
    assert record.read_text().splitlines() == [str(ws.resolve())] * 2


@pytest.mark.parametrize(
    ("line", "below", "rebased"),
    [
        ("*.log", "src/app", ["**/*.log"]),
        ("build/", "src", ["**/build/"]),
        ("/build", "src", []),
        ("/src", "src/app", []),
        ("src", "src/app", ["**/src"]),
        ("src/app/local/", "src/app", ["/local/"]),
        ("!src/keep.txt", "src", ["!/keep.txt"]),
        ("s*/gen", "src", ["/gen"]),
        ("s*/gen", "lib", []),
        ("tmp/**", "tmp", ["**/*"]),
        ("src/**/gen", "src/app", ["**/gen"]),
        ("src/**/gen", "lib/app", []),
        ("a/**/b/c", "a/b", ["**/b/c", "/c"]),
        ("**/a/b", "src", ["**/a/b"]),
        ("**/a/b", "a", ["**/a/b", "/b"]),
        ("{src,lib}/x", "src", ["/x"]),
        ("{src,lib}/x", "doc", []),
        ("{src/a,lib}/x/", "src/a", ["/x/"]),
        ("src/*.{js,ts}", "src", ["/*.{js,ts}"]),
        ("src/{a,b}*/c", "src/bz", ["/c"]),
        ("a\\/b/c", "a/b", ["/c"]),
        ("s\\*/x", "s*", ["/x"]),
        ("s\\*/x", "sa", []),
        ("[ab]/x", "b", ["/x"]),
        # globset's corners: `**` next to a group or class is a star within a component;
        # in a group it is recursive only against its own alternate's `/`
        ("a/**[!x]b", "a/c", ["/b"]),
        ("x{**/a,b}", "xq/r", ["**/a"]),
        ("{a/**,b}c", "a/q", ["**/*c"]),
        ("q/{**,a/b}/c", "q/z", ["/c"]),
        ("a/**{*/c,d}", "a/x", ["/c"]),
        ("m[!x]n", "m", ["**/m[!x]n", "**/m/n", "/n"]),
    ],
)
def test_rules_are_rebased_for_a_subdirectory(line, below, rebased):
    from agentcli.tools.ignore import parse_rule
    from agentcli.tools.ignore_rebase import rebase_rule

    rule = parse_rule(line)
    assert rule is not None
    assert rebase_rule(rule, below) == rebased


# Pieces of rules, joined with `/` or glued: recursion, alternates that span components
# (with `**` at their edges), classes that match `/`, escapes.
_PIECES = ["a", "b", "ab", "*", "?", "a*", "**", "[ab]", "[!a]", "[/]", "{a,b}", "{a,b}*"]
_PIECES += ["{a/b,c}", "{a,b/**/c}", "{*/a,b}", "{**/a,b}", "{a/**,b}", "{**,a/b}"]
_PIECES += ["{[!a]b,c}", "a\\/b", "\\*", "{a\\/**,b}"]
_STEPS = ["a", "b", "ab", "c", "ba", "*"]


@given(
    pieces=st.lists(
        st.tuples(st.sampled_from(_PIECES), st.sampled_from(["/", "/", ""])),
        min_size=1,
        max_size=5,
    ),
    anchored=st.booleans(),
    negated=st.booleans(),
    dir_only=st.booleans(),
    below=st.lists(st.sampled_from(_STEPS), min_size=1, max_size=3),
    rest=st.lists(st.sampled_from(_STEPS), min_size=1, max_size=3),
)
@settings(max_examples=1000, deadline=None)
def test_a_rebased_rule_matches_what_the_rule_matches_below(
    pieces, anchored, negated, dir_only, below, rest
):
    """For any rule and any path under `below`: one of the rewritten lines matches the
    path from `below` exactly when the rule matches it from its own directory, with the
    same polarity and directory-only flag."""
    from agentcli.tools.ignore import GlobError, parse_rule
    from agentcli.tools.ignore_rebase import TooManyLines, rebase_rule

    glob = "".join(piece + joint for piece, joint in pieces)[: -len(pieces[-1][1]) or None]
    line = ("!" if negated else "") + ("/" if anchored else "") + glob
    line += "/" if dir_only else ""
    try:
        rule = parse_rule(line)
    except GlobError:  # pieces glued into a nested group
        rule = None
    assume(rule is not None)
    assert rule is not None
    path = "/".join(rest)
    try:
        lines = rebase_rule(rule, "/".join(below))
    except TooManyLines:  # bounded on purpose: such a search is walked instead (tested below)
        assume(False)
        return
    rebased = [parse_rule(text) for text in lines]
    assert all(r is not None and (r.negated, r.dir_only) == (negated, dir_only) for r in rebased)
    expected = rule.regex.fullmatch("/".join(below) + "/" + path) is not None
    assert any(r is not None and r.regex.fullmatch(path) for r in rebased) == expected


# --- the two backends agree --------------------------------------------------------------


def _parity_tree(root: Path) -> None:
    write(
        root,
        ".gitignore",
        "*.log\n/build\ntmp/**\n!tmp/keep/\n!tmp/keep/**\nvendor/\n"
        "src/**/cache/\n{docs,src}/**/*.bak\n!src/app/nested/keep.bak\n",
    )
    write(root, "src/app/cache/c.py", "alpha cached\n")
    write(root, "src/app/nested/old.bak", "alpha backed up\n")
    write(root, "src/app/nested/keep.bak", "alpha kept back\n")
    write(root, "docs/x.bak", "alpha\n")
    write(root, "tmp/a.txt", "alpha\n")
    write(root, "tmp/keep/b.txt", "alpha kept\n")
    write(root, "build/x.py", "alpha\n")
    write(root, "src/build/y.py", "def alpha():\n    pass\n")
    write(root, "src/.gitignore", "!debug.log\n*.gen.py\n")
    write(root, "src/debug.log", "alpha debug\n")
    write(root, "src/a.gen.py", "alpha generated\n")
    write(root, "src/app/.gitignore", "/local/\n")
    write(root, "src/app/local/z.py", "alpha local\n")
    write(
        root, "src/app/core.py", "".join(f"line {i} {'alpha' * (i % 3 == 0)}\n" for i in range(40))
    )
    write(root, "src/app/nested/deep.py", "x = 1\r\nalpha = 2\r\n\r\nbeta\r\n")
    write(root, "src/app/no_newline.py", "alpha at the end")
    write(root, "src/unicode.txt", "Ünïcödé ALPHA\nσίσυφος Alpha\n")
    write(root, "docs/readme.md", "# alpha\n\n\nBeta\n")
    write(root, "docs/a b/space.md", "alpha with spaces\n")
    write(root, "vendor/lib.py", "alpha vendored\n")
    write(root, ".config/settings.toml", "alpha = true\n")
    write(root, "data.bin", b"alpha\x00binary\n")
    write(root, "long.txt", "z" * 700 + "alpha" + "z" * 700 + "\n")


CONTENT_CASES = [
    {"pattern": "alpha"},
    {"pattern": "alpha", "context": 2},
    {"pattern": "alpha", "context": 3, "max_results": 5},
    {"pattern": "alpha", "max_results": 7, "context": 1},
    {"pattern": "ALPHA", "ignore_case": True},
    {"pattern": "^$"},
    {"pattern": r"\w+ = \d+$"},
    {"pattern": "alpha", "glob": "*.py"},
    {"pattern": "alpha", "glob": "!*.py", "context": 1},
    {"pattern": "alpha", "glob": "src/app/**"},
    {"pattern": "alpha", "glob": "{docs,tmp}/**/*.{md,txt}"},
    {"pattern": "alpha", "path": "src/app"},
    {"pattern": "alpha", "path": "src/app", "glob": "*.py"},
    {"pattern": "alpha", "path": "tmp"},
    {"pattern": "alpha", "path": "src/app/nested"},
    {"pattern": "alpha", "path": "src/app/nested", "glob": "!*.py"},
    {"pattern": r"(?<=line )\d+ alpha", "path": "src/app", "max_results": 4},
    {"pattern": r"(a)lph\1", "context": 1},
    {"pattern": r"alpha(?!\w)", "glob": "*.{md,bak}"},
    {"pattern": "alpha", "path": "src/app/core.py", "context": 1},
    {"pattern": "alpha", "path": "data.bin"},
    {"pattern": "ünïcödé", "ignore_case": True},
    {"pattern": "end$"},
    {"pattern": "nothing at all"},
]
FILE_CASES = [
    {"pattern": "*"},
    {"pattern": "**"},
    {"pattern": "*.py"},
    {"pattern": "src/**/*.py"},
    {"pattern": "src/*/*.py"},
    {"pattern": "!*.py"},
    {"pattern": "**/keep/**"},
    {"pattern": "*.{md,txt}", "path": "docs"},
    {"pattern": "*", "path": "src/app"},
    {"pattern": "**", "path": "src/app/nested"},
    {"pattern": "*.bak", "path": "src/app"},
    {"pattern": "[a-c]*.py"},
    {"pattern": "src/app/"},
]


@pytest.fixture(scope="module")
def parity_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("parity")
    _parity_tree(root)
    return root


def _both(tool: type, root: Path, args: dict[str, Any]) -> tuple[str, str]:
    if RG is None:
        pytest.skip("ripgrep (`rg`) is not installed; nothing to compare the fallback with")
    with_rg, with_python = (call(tool(b), root, **args).content for b in ("ripgrep", "python"))
    return with_rg, with_python


@pytest.mark.parametrize("args", CONTENT_CASES, ids=lambda a: " ".join(map(str, a.values())))
def test_backends_agree_on_content(parity_root, args):
    with_rg, with_python = _both(SearchContent, parity_root, args)
    assert with_rg == with_python


@pytest.mark.parametrize("args", FILE_CASES, ids=lambda a: " ".join(map(str, a.values())))
def test_backends_agree_on_files(parity_root, args):
    with_rg, with_python = _both(SearchFiles, parity_root, args)
    assert with_rg == with_python


_RULE_PIECES = [*_PIECES, "c", "*b", "{a,b/**/c}"]


@pytest.mark.parametrize("seed", range(4))
def test_backends_agree_under_random_rules_above_a_subdirectory(tmp_path, seed):
    """Random trees under random `.gitignore` lines (recursion, groups, classes, glued
    pieces): a search of each subdirectory lists the same files with ripgrep (handed the
    rules above it rewritten) as with the walk (which reads them as they are)."""
    import random

    if RG is None:
        pytest.skip("ripgrep (`rg`) is not installed")
    rng = random.Random(seed)
    compared = 0
    for trial in range(10):
        root = tmp_path / f"tree{trial}"
        for _ in range(50):
            path = root.joinpath(*rng.choices(_STEPS[:5], k=rng.randint(1, 4)))
            if not any(p.is_file() for p in [path, *path.parents]) and not path.is_dir():
                write(path.parent, path.name, "x\n")
        lines = []
        for _ in range(rng.randint(1, 4)):
            pieces = rng.choices(_RULE_PIECES, k=rng.randint(1, 4))
            glob = "".join(p + rng.choice(["/", "/", ""]) for p in pieces).rstrip("/")
            lines.append(rng.choice(["", "", "", "!"]) + rng.choice(["", "", "/"]) + glob)
        write(root, ".gitignore", "\n".join(lines) + "\n")
        for directory in sorted(p for p in root.rglob("*") if p.is_dir())[:6]:
            rel = directory.relative_to(root).as_posix()
            args = {"pattern": "**", "path": rel}
            with_rg, with_python = _both(SearchFiles, root, args)
            assert with_rg == with_python, (lines, rel)
            compared += 1
    assert compared >= 20


def test_parity_tree_results_are_the_expected_ones(parity_root, monkeypatch):
    """The parity cases are only meaningful if the tree exercises the rules."""
    monkeypatch.setenv(BACKEND_ENV, "python")
    files = listed(find(parity_root, "**"))
    text = grep(parity_root, "alpha", context=1).content
    assert "tmp/keep/b.txt" in files and "tmp/a.txt" not in files
    assert "src/build/y.py" in files and "build/x.py" not in files
    assert "src/debug.log" in files and "src/a.gen.py" not in files
    assert "src/app/local/z.py" not in files and "vendor/lib.py" not in files
    assert "src/app/cache/c.py" not in files and "src/app/nested/old.bak" not in files
    assert "src/app/nested/keep.bak" in files and "docs/x.bak" not in files
    assert ".config/settings.toml" in files and "data.bin" in files
    assert "data.bin" not in text and "[… line truncated]" in text
    assert os.sep == "/"  # paths are shown with forward slashes


def test_through_the_executor(ws, monkeypatch):
    """Schemas validate, calls run under the default policy, failures become results."""
    monkeypatch.setenv(BACKEND_ENV, "python")
    registry = ToolRegistry([SearchFiles(), SearchContent()])
    context = ToolContext(workspace=Workspace(ws))
    executor = Executor(registry, Policy(), context, lambda event: None)
    calls = [
        ToolCall(id="a", name="search_content", arguments=json.dumps({"pattern": "needle"})),
        ToolCall(id="b", name="search_files", arguments=json.dumps({"pattern": "*.md"})),
        ToolCall(id="c", name="search_content", arguments=json.dumps({"pattern": "("})),
        ToolCall(id="d", name="search_content", arguments='{"pattern": "x", "context": 11}'),
    ]
    found, files, bad_regex, bad_args = asyncio.run(executor.run(calls))
    assert found.error is None and found.content.startswith("6 matches in 6 files")
    assert files.error is None and files.content == "README.md\ndocs/guide.md"
    assert bad_regex.error is not None and "invalid regular expression '('" in bad_regex.content
    assert (
        bad_args.error is not None and "context: 11 is greater than the maximum" in bad_args.content
    )


@pytest.mark.parametrize("args", CONTENT_CASES[:8], ids=lambda a: " ".join(map(str, a.values())))
def test_large_files_are_streamed_with_the_same_results(parity_root, monkeypatch, args):
    whole = call(SearchContent("python"), parity_root, **args).content
    monkeypatch.setattr(search_py, "WHOLE_FILE_BYTES", 0)  # every file read line by line
    assert call(SearchContent("python"), parity_root, **args).content == whole


@pytest.mark.parametrize(
    ("platform", "machine", "wheel"),
    [
        ("linux", "x86_64", True),
        ("linux", "aarch64", True),
        ("linux", "armv7l", True),
        ("linux", "i686", True),
        ("linux", "ppc64le", True),
        ("linux", "s390x", True),
        ("darwin", "arm64", True),
        ("win32", "AMD64", True),
        ("win32", "x86", True),
        ("linux", "ppc64", False),  # big-endian: no wheel, though a substring of ppc64le
        ("linux", "s390", False),
        ("linux", "arm", False),
        ("linux", "riscv64", False),
        ("win32", "ARM64", False),
        ("freebsd14", "amd64", False),
    ],
)
def test_ripgrep_is_a_dependency_exactly_where_its_wheel_exists(platform, machine, wheel):
    """Elsewhere installing would fail (no wheel to take): the walk serves there."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    (line,) = [d for d in project["project"]["dependencies"] if d.startswith("ripgrep")]
    marker = Requirement(line).marker
    assert marker is not None
    assert marker.evaluate({"sys_platform": platform, "platform_machine": machine}) == wheel


BACKTRACKING = ["(?<=a)(a|aa)+$", "(?=a)(a+)+$", "(a|aa)*\\1b"]


@pytest.mark.parametrize("pattern", BACKTRACKING)
def test_a_pattern_that_backtracks_without_end_is_stopped_in_one_line(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pattern: str
) -> None:
    """ripgrep rejects look-around and backreferences, so Python matches them: `re` took
    forever on `(?<=a)(a|aa)+$` over 40 a's, holding the GIL (no signal could stop the run).
    The `regex` module bounds the search's matching (MATCH_SECONDS, shortened here)."""
    monkeypatch.setattr(search_py, "MATCH_SECONDS", 0.5)
    write(tmp_path, "redos.txt", "a" * 40 + "!\n")
    if pattern == BACKTRACKING[0]:  # backtracks in the regex module too: stopped
        with pytest.raises(ToolFailure, match=r"took more than 0\.5 s to match") as failure:
            grep(tmp_path, pattern)
        assert "\n" not in str(failure.value)
        return
    out = grep(tmp_path, pattern)  # the regex module answers these at once: no match
    assert "redos.txt" not in out.content, out.content


def test_the_bound_is_on_the_whole_search_not_each_match() -> None:
    import time

    import regex

    search = search_py.bounded(regex.compile("(?<=a)(a|aa)+$"), time.monotonic() + 0.2)
    with pytest.raises(TimeoutError):
        search("a" * 40 + "!")
    with pytest.raises(TimeoutError):  # past the deadline, even a quick match is refused
        search("a")


def test_a_ripgrep_search_does_not_import_the_python_matcher(tmp_path: Path) -> None:
    """The regex module (18 ms to import) is for what ripgrep rejects; checked in a fresh
    interpreter, where nothing else has imported it."""
    import subprocess
    import sys

    if RG is None:
        pytest.skip("ripgrep (`rg`) is not installed")
    write(tmp_path, "a.txt", "def x\n")
    code = (
        "import asyncio, sys; from pathlib import Path\n"
        "from agentcli.tools.search import SearchContent\n"
        "from agentcli.tools.base import ToolContext\n"
        "from agentcli.workspace.root import Workspace\n"
        f"ctx = ToolContext(workspace=Workspace(Path({str(tmp_path)!r})))\n"
        "out = asyncio.run(SearchContent('ripgrep').execute({'pattern': 'def'}, ctx))\n"
        "print('a.txt:1' in out.content, 'regex' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False"], done.stdout + done.stderr
