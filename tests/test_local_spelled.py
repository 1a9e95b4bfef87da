"""What a request spells out for each kind of argument, how the grammar narrows a call's
arguments to it, and how well a request fills each tool's arguments (no model: these
parts are pure text and a temporary workspace).
Requests in other words than the benchmark's (bench/local_model.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentcli.assembly import builtin_tools
from agentcli.providers.local import fit, grammar, spelled

TOOLS = {t.spec()["name"]: t.spec() for t in builtin_tools()}
# web_search is configured, not built in: its schema as the registry gives it
TOOLS["web_search"] = {
    "name": "web_search",
    "parameters": {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
}


def narrowed(name: str, request: str, workspace: Path | None = None) -> dict:
    schema = grammar.arguments_grammar(TOOLS[name], copy_from=request, workspace=workspace)
    return json.loads(schema)


def test_quoted_strings_open_and_close_at_word_edges():
    assert spelled.quoted("grep 'open(' and \"x y\" now") == ["open(", "x y"]
    # an apostrophe in a word, or quotes inside code, open no string
    assert spelled.quoted("what's in Bob's notes") == []
    assert spelled.quoted("save print('ok') to a.py") == []


def test_arithmetic_as_written_or_in_words():
    assert spelled.expressions("what's 12*(3+4)?") == ["12*(3+4)"]
    assert spelled.expressions("how much is 7 times 6") == ["7 * 6"]
    assert spelled.expressions("divide 90 by 15 please") == ["90 / 15"]
    assert spelled.expressions("subtract 8 from 20") == ["20 - 8"]
    assert spelled.expressions("what is 9 squared") == ["9**2"]
    assert spelled.expressions("work out sqrt(81) + 1") == ["sqrt(81) + 1"]
    # numbers alone, versions and dates are no arithmetic
    assert spelled.expressions("install version 2.1 on May 3") == []
    assert spelled.expressions("what is the capital of Peru?") == []


def test_the_text_a_file_is_to_hold():
    assert spelled.file_contents("make out.md containing first line", ["out.md"]) == ["first line"]
    assert spelled.file_contents("write the word yes into flag.txt", ["flag.txt"]) == ["yes"]
    assert spelled.file_contents("save 'a b c' to x.txt", ["x.txt"]) == ["a b c"]
    assert "ping" in spelled.file_contents("new file a.log that says ping", ["a.log"])
    # the file's own name is never its content
    assert spelled.file_contents("open x.txt", ["x.txt"]) == []


def test_the_text_to_search_for():
    assert spelled.search_texts("find the word banana in lib", []) == ["banana"]
    assert spelled.search_texts("where is render_page called?", []) == ["render_page"]
    assert spelled.search_texts("grep for NOT READY", []) == ["NOT READY"]
    assert spelled.search_texts("which files use the numpy module?", []) == ["numpy"]
    assert spelled.search_texts("look for mentions of redis in src/db.py", ["src/db.py"]) == [
        "redis"
    ]
    # capitals in a question that searches nothing are an acronym, not a search
    assert spelled.search_texts("what does JSON stand for?", []) == []


def test_command_lines_start_at_a_program():
    assert spelled.commands("please run ls -l /tmp for me") == ["ls -l /tmp"]
    assert spelled.commands("execute: echo done") == ["echo done"]
    assert spelled.commands("start the build with ./build.sh --fast") == ["./build.sh --fast"]
    assert spelled.commands("what time is it?") == []


def test_web_queries_and_urls():
    assert spelled.web_queries("search the web for cheap flights") == ["cheap flights"]
    assert spelled.web_queries("google how tall is Everest") == ["how tall is Everest"]
    assert spelled.web_queries("look up knot theory online") == ["knot theory"]
    assert spelled.web_queries("tell me a story about a fox") == []
    assert spelled.urls("get https://example.com/a?b=1, then stop") == ["https://example.com/a?b=1"]


def test_globs_for_a_kind_of_file():
    assert spelled.file_globs("find the ruby files") == ["**/*.rb"]
    assert spelled.file_globs("list files ending in .ini") == ["**/*.ini"]
    assert spelled.file_globs("where is a file named app.conf?") == ["**/app.conf"]
    assert spelled.file_globs("any files called backup?") == ["**/*backup*"]
    assert spelled.file_globs("are there jpg images?") == ["**/*.jpg"]
    assert spelled.file_globs("what time is it?") == []


def test_the_grammar_narrows_arguments_to_what_the_request_spells_out(tmp_path: Path):
    schema = narrowed("calculator", "how much is 12 divided by 4?")
    assert schema["properties"]["expression"]["enum"] == ["12 / 4"]
    schema = narrowed("write_file", "create log.txt containing all good")
    assert schema["properties"]["content"]["enum"] == ["all good"]
    assert schema["properties"]["path"]["enum"] == ["log.txt"]
    schema = narrowed("search_files", "find the yaml files")
    assert schema["properties"]["pattern"]["enum"] == ["**/*.yaml"]
    # nothing spelled out: the spans as before (a glob is then made freely)
    schema = narrowed("search_files", "find what I changed")
    assert "enum" not in schema["properties"]["pattern"]
    schema = narrowed("web_search", "serch teh web 4 cats")
    assert "cats" in schema["properties"]["query"]["enum"]
    # a URL is no path
    schema = narrowed("read_file", "read https://example.com/x.txt")
    assert "https://example.com/x.txt" not in schema["properties"]["path"]["enum"]
    # the off switch keeps the spans
    off = grammar.copy_constrained(
        TOOLS["calculator"],
        grammar.arguments_schema(TOOLS["calculator"]),
        "what is 2 + 2",
        spelled=False,
    )
    assert "what is 2 + 2" in off["properties"]["expression"]["enum"]


def test_a_named_entry_of_the_right_kind_is_the_path(tmp_path: Path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "a.png").write_text("x")
    listing = narrowed("list_directory", "what's in assets?", tmp_path)
    assert listing["properties"]["path"]["enum"] == ["assets"]
    assert listing["required"] == ["path"]  # named: no longer left to the default
    # a file named is not the folder a search looks in
    finding = narrowed("search_files", "where is assets/a.png?", tmp_path)
    assert "assets/a.png" not in finding["properties"]["path"]["enum"]
    assert finding["properties"]["pattern"]["enum"] == ["**/assets/a.png"]
    # a file to write that reads as no path: the name after "into"
    writing = narrowed("write_file", "put 1.0 into RELEASE", tmp_path)
    assert writing["properties"]["path"]["enum"] == ["RELEASE"]


@pytest.mark.parametrize(
    ("request_text", "best"),
    [
        ("open assets/a.png", "read_file"),
        ("what is in assets", "list_directory"),
        ("https://example.com/feed please", "fetch_url"),
        ("7 times 8", "calculator"),
        ("run uname -r", "run_shell"),
    ],
)
def test_the_fit_favours_the_tools_whose_arguments_the_request_fills(
    tmp_path: Path, request_text: str, best: str
):
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "a.png").write_text("x")
    scores = fit.argument_fit(request_text, list(TOOLS.values()), tmp_path)
    top = max(scores.values())
    assert scores[best] == top and scores["answer"] < top, scores


def test_the_fit_counts_against_a_tool_whose_required_argument_is_missing(tmp_path: Path):
    scores = fit.argument_fit("who wrote Dracula?", list(TOOLS.values()), tmp_path)
    assert scores["answer"] == 0.0
    for name in ("read_file", "calculator", "fetch_url", "run_shell", "write_file"):
        assert scores[name] < 0, (name, scores)
    assert scores["system_info"] == 0.0  # a tool with no arguments is not counted against


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"Makefile": "all:\n\tcc x.c\ntest: all\n\t./check\n", "pyproject.toml": ""}, "make test"),
        ({"package.json": '{"scripts": {"test": "vitest run"}}'}, "npm test"),
        ({"Cargo.toml": "[package]\nname = 'x'\n"}, "cargo test"),
        ({"go.mod": "module x\n"}, "go test ./..."),
        ({"tests/test_calc.py": "def test_x(): pass\n"}, None),  # pytest, by PATH
    ],
)
def test_run_the_tests_is_the_projects_test_command(
    tmp_path: Path, files: dict[str, str], expected: str | None
):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    for request in ("run the tests", "pls run the test suite", "execute the unit tests now"):
        schema = narrowed("run_shell", request, tmp_path)
        choices = schema["properties"]["command"]["enum"]
        if expected is None:
            assert choices[0] in ("pytest", "python3 -m pytest"), choices
        else:
            assert choices[0] == expected, choices
        # the word "tests" is no program: never offered as the command line
        assert not any(c.split()[0] in ("tests", "test", "unit") for c in choices), choices


def test_a_task_the_project_does_not_declare_offers_no_made_up_command(tmp_path: Path):
    from agentcli.providers.local import project_tasks

    # an npm script that is not the build, a Makefile without the target, a FIFO in
    # place of package.json: nothing read hangs and nothing is made up
    (tmp_path / "Makefile").write_text("lint:\n\ttrue\n")
    os.mkfifo(tmp_path / "package.json")
    assert project_tasks.task_command(tmp_path, "build") is None
    assert project_tasks.project_commands("run the build", tmp_path) == []
    assert project_tasks.project_commands("run git status", tmp_path) == []
    assert spelled.commands("please run ls -l /tmp for me") == ["ls -l /tmp"]
