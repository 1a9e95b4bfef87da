"""How often the embedded local model calls the right tool with the right arguments, and
how much of that the model decides and how much the examples decide.

    python bench/local_model.py [--set all|original|heldout|two-args|frozen|heldout30|
                                       heldout30b|heldout41|dev]
                                [--models smollm2-135m] [--formats fewshot-core,...]
                                [--json FILE] [-v] [--calibrate]

Needs `agentcli[local]` and the model package (the README's first command). Runs every
scripted prompt below through `LocalProvider` — the real agentcli tool schemas, the
provider's own prompt and grammar — and prints, per set, the share of right tool choices
on the simple single-tool requests and on the two-argument requests by

- the model only (the scored choice with the examples' prior taken out),
- the prior only (the router's likeness to each tool's examples and the bias towards
  answering: no model at all),
- both combined (what the provider does),

then the combined share right with the arguments too (the arguments are always written
by the model, under a grammar that lets it copy only words of the request), the share
of plain questions answered without a tool, and the mean seconds per step.

Sets: `original`, `heldout` and `two-args` are development sets (the provider was
developed and tuned on them); `frozen` was written and committed alone before any change
for issue 18, never tuned on, but its misses were read and written down, so for issue 30
it is a development set too; `heldout30` was written and committed alone before any
change for issue 30, and run once, but its results were read, so it is a development set
now; `heldout30b` was written and committed alone before any change of issue 30's second
round, run once and read, so it is a development set for issue 41; `heldout41` was written
and committed alone before any change of issue 41 and is never tuned on: its row is the
honest measure. Formats:

- `fewshot-core`    (the default): chat template, scored choice, few-shot examples, the
                    core tools (and any tool that brings examples) offered;
- `fewshot-all`     the same, every tool offered;
- `fewshot-req`     the core tools, arguments limited to the required properties;
- `nocopy-core`     arguments not limited to the request's words;
- `greedy-core`     one grammar for the whole decision, decoded greedily (no scores);
- `zeroshot-core`   no few-shot examples;
- `plain-core`      a completion-style prompt (no chat template), few-shot;
- `server-tools`    llama.cpp's own tool calling (its server's chat completions with
                    `tools`), no prompt, router or grammar of ours (the baseline);
- `own-core`        the arguments written after a prompt of the tool's own examples
                    (the default writes them after the decision's prompt);
- `channel-core`    with the channel score (the request's likelihood under each tool's
                    intent; off by default), `nocal-core` without the contextual
                    calibration, `old-core` both as issue 18 had them;
- `nospell-core`    the copied arguments limited to the request's spans only, not to what
                    it spells out for each kind of argument (a URL, an expression, a
                    file's text...: agentcli.providers.local.spelled);
- `nofit-core`      the prior without the arguments' fit (agentcli.providers.local.fit).

Each set's choice is also printed with one part of it taken out (the examples, the fit,
the calibration, the answer bias), from the same scores: what each part contributes.

Target: >= 90% right (tool and arguments) on the held-out set (`heldout41`), its simple
requests and its two-argument ones. Always exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET = 0.90
HELD_OUT = "heldout41"  # the set the target is measured on: never tuned on
Check = Callable[[dict[str, Any]], bool]


def _bare_path(value: Any) -> str:
    """A path as the checks compare it: without a leading ./ (a dot-file's own dot kept:
    `.env.example` is not `env.example`)."""
    path = str(value or "").strip()
    while path.startswith("./"):
        path = path[2:]
    return path


def _path_is(*names: str) -> Check:
    return lambda a: _bare_path(a.get("path", "")) in names


def _no_path_or(*names: str) -> Check:
    return lambda a: str(a.get("path", "") or ".").strip().rstrip("/") in {".", "", *names}


def _contains(key: str, *words: str) -> Check:
    return lambda a: all(w.lower() in str(a.get(key, "")).lower() for w in words)


def _equals(key: str, value: str) -> Check:
    return lambda a: str(a.get(key, "")).strip() == value


def _computes(value: int) -> Check:
    def check(args: dict[str, Any]) -> bool:
        from agentcli.tools.arithmetic import calculate

        try:
            return calculate(str(args.get("expression", ""))) == value
        except Exception:
            return False

    return check


def _anything(args: dict[str, Any]) -> bool:
    return True


@dataclass(frozen=True)
class Case:
    prompt: str
    tool: str | None  # None: a plain question, answered without a tool
    check: Check = _anything
    simple: bool = True  # a simple single-tool request (the 80% target)
    two_args: bool = False  # a request that spells out two arguments (their own column)


CASES: list[Case] = [
    Case("what is in README.md?", "read_file", _path_is("README.md")),
    Case("show me the contents of notes.txt", "read_file", _path_is("notes.txt")),
    Case("read src/app.py", "read_file", _path_is("src/app.py")),
    Case("open the file config.toml", "read_file", _path_is("config.toml")),
    Case("print CHANGELOG.md", "read_file", _path_is("CHANGELOG.md")),
    Case("list the files", "list_directory", _no_path_or()),
    Case("what files are in the docs directory?", "list_directory", _no_path_or("docs")),
    Case("show me the directory listing", "list_directory", _no_path_or()),
    Case("find TODO in the code", "search_content", _contains("pattern", "TODO")),
    Case("search for the word fixme in all files", "search_content", _contains("pattern", "fixme")),
    Case("which files mention database?", "search_content", _contains("pattern", "database")),
    Case("find all python files", "search_files", _contains("pattern", ".py")),
    Case("find every markdown file", "search_files", _contains("pattern", ".md")),
    Case("what is 17*23?", "calculator", _computes(391)),
    Case("calculate 2**10", "calculator", _computes(1024)),
    Case("how much is 1234 + 5678?", "calculator", _computes(6912)),
    Case("run the command pwd", "run_shell", _equals("command", "pwd")),
    Case("execute git status", "run_shell", _equals("command", "git status")),
    Case("what operating system is this machine running?", "system_info"),
    Case("how much memory does this computer have?", "system_info"),
    Case("fetch https://example.com", "fetch_url", _equals("url", "https://example.com")),
    Case(
        "create a file hello.txt containing hi",
        "write_file",
        lambda a: _path_is("hello.txt")(a) and "hi" in str(a.get("content", "")).lower(),
        simple=False,
        two_args=True,
    ),
    Case("what is the capital of France?", None),
    Case("hello, who are you?", None),
    Case("write a haiku about the sea", None),
    Case("thanks, that's all", None),
]

# A second set, written before the provider was tuned any further and never tuned on:
# how well the choice generalizes to phrasings neither the examples nor CASES use.
HELDOUT: list[Case] = [
    Case("display the contents of requirements.txt", "read_file", _path_is("requirements.txt")),
    Case("cat Makefile", "read_file", _path_is("Makefile")),
    Case("can you read docs/guide.md for me?", "read_file", _path_is("docs/guide.md")),
    Case("what does pyproject.toml say?", "read_file", _path_is("pyproject.toml")),
    Case("ls src", "list_directory", _no_path_or("src")),
    Case("what's in this directory?", "list_directory", _no_path_or()),
    Case("show the contents of the tests folder", "list_directory", _no_path_or("tests")),
    Case("grep for FIXME", "search_content", _contains("pattern", "FIXME")),
    Case("where is parse_args defined?", "search_content", _contains("pattern", "parse_args")),
    Case(
        "search the project for the string API_KEY",
        "search_content",
        _contains("pattern", "API_KEY"),
    ),
    Case("list all the .txt files", "search_files", _contains("pattern", ".txt")),
    Case("find the yaml files", "search_files", _contains("pattern", "yaml")),
    Case("what's 144 / 12?", "calculator", _computes(12)),
    Case("compute 7 * 8 + 2", "calculator", _computes(58)),
    Case("calculate 99 - 33", "calculator", _computes(66)),
    Case("run ls -la", "run_shell", _equals("command", "ls -la")),
    Case("execute the command make build", "run_shell", _equals("command", "make build")),
    Case("run npm test", "run_shell", _equals("command", "npm test")),
    Case("how many cores does this box have?", "system_info"),
    Case("what version of Linux is this?", "system_info"),
    Case("get https://example.org/page", "fetch_url", _equals("url", "https://example.org/page")),
    Case(
        "search the internet for python asyncio tutorial",
        "web_search",
        _contains("query", "asyncio"),
    ),
    Case("what is a linked list?", None),
    Case("good morning", None),
    Case("explain recursion in one sentence", None),
]
# A third set, written and committed alone before any change for issue 18, in words chosen
# not to echo the router's example bank (other files, verbs, sentence shapes, some typos).
# Frozen: no weight, example or rule may be changed after looking at its results, so it
# measures how the choice generalizes. Its files exist in the workspace (FROZEN_WORKSPACE).
FROZEN: list[Case] = [
    Case("can u print out server/main.go for me", "read_file", _path_is("server/main.go")),
    Case("I'd like to see what's inside LICENSE.txt", "read_file", _path_is("LICENSE.txt")),
    Case("dump the contents of data/users.csv", "read_file", _path_is("data/users.csv")),
    Case("spit out todo.md", "read_file", _path_is("todo.md")),
    Case("whats written in scripts/deploy.sh?", "read_file", _path_is("scripts/deploy.sh")),
    Case("could you bring up package.json", "read_file", _path_is("package.json")),
    Case("view the file docs/api.rst", "read_file", _path_is("docs/api.rst")),
    Case("pls reed index.html", "read_file", _path_is("index.html")),
    Case("shwo me setup.cfg", "read_file", _path_is("setup.cfg")),
    Case("which files live in the server folder?", "list_directory", _path_is("server", "server/")),
    Case("what's in this directory", "list_directory", _no_path_or()),
    Case("enumerate everything under data/", "list_directory", _path_is("data", "data/")),
    Case("give me a listing of the scripts dir", "list_directory", _path_is("scripts", "scripts/")),
    Case("show the folder structure here", "list_directory", _no_path_or()),
    Case("what does the current folder contain?", "list_directory", _no_path_or()),
    Case("locate every .yaml file", "search_files", _contains("pattern", "yaml")),
    Case(
        "where is the file called settings.json?", "search_files", _contains("pattern", "settings")
    ),
    Case("find all files ending in .sql", "search_files", _contains("pattern", "sql")),
    Case("are there any png images in here?", "search_files", _contains("pattern", "png")),
    Case("search for files named Dockerfile", "search_files", _contains("pattern", "Dockerfile")),
    Case("which files mention TODO?", "search_content", _contains("pattern", "TODO")),
    Case("grep for connect_db in the code", "search_content", _contains("pattern", "connect_db")),
    Case("where do we call parse_args?", "search_content", _contains("pattern", "parse_args")),
    Case(
        "look through the source for the word deprecated",
        "search_content",
        _contains("pattern", "deprecated"),
    ),
    Case("find lines containing FIXME", "search_content", _contains("pattern", "FIXME")),
    Case("how much is 17 times 23?", "calculator", _computes(391)),
    Case("compute 2**10", "calculator", _computes(1024)),
    Case("what do you get if you divide 144 by 12", "calculator", _computes(12)),
    Case("(45+55)*3 = ?", "calculator", _computes(300)),
    Case("calcualte 999 - 111", "calculator", _computes(888)),
    Case("run the command git status", "run_shell", _contains("command", "git status")),
    Case("execute make test", "run_shell", _contains("command", "make test")),
    Case("in the terminal, type: echo hi", "run_shell", _contains("command", "echo hi")),
    Case("please launch npm install", "run_shell", _contains("command", "npm install")),
    Case("kick off pytest -q", "run_shell", _contains("command", "pytest")),
    Case("which operating system am I on?", "system_info"),
    Case("tell me about this machine's cpu", "system_info"),
    Case("whats the python version and platform here", "system_info"),
    Case(
        "download https://example.net/data.json",
        "fetch_url",
        _equals("url", "https://example.net/data.json"),
    ),
    Case(
        "get me the page at http://example.org/about",
        "fetch_url",
        _equals("url", "http://example.org/about"),
    ),
    Case(
        "grab the text of https://www.example.org/docs/3/",
        "fetch_url",
        _equals("url", "https://www.example.org/docs/3/"),
    ),
    Case("search the internet for rust async tutorials", "web_search", _contains("query", "rust")),
    Case("google the latest ubuntu release", "web_search", _contains("query", "ubuntu")),
    Case(
        "look up online who invented the transistor", "web_search", _contains("query", "transistor")
    ),
    Case("serch the web for sqlite performance tips", "web_search", _contains("query", "sqlite")),
    Case("why is the sky blue?", None),
    Case("thanks, that's all", None),
    Case("what does HTTP stand for?", None),
    Case("give me a synonym for quick", None),
    Case("tell me a joke about cats", None),
    Case("translate 'good night' to Spanish", None),
]


def _two(key: str, value: str, key2: str, value2: str) -> Check:
    """Both arguments right: `key` is `value` (a path is compared without ./ or a
    trailing /) and `key2` contains `value2`."""

    def check(args: dict[str, Any]) -> bool:
        got = _bare_path(args.get(key, "")).rstrip("/")
        return got == value and value2.lower() in str(args.get(key2, "")).lower()

    return check


# The frozen set's two-argument requests (their own column: both arguments must be right).
FROZEN_TWO_ARGS: list[Case] = [
    Case(
        "create a file notes.txt containing hello",
        "write_file",
        _two("path", "notes.txt", "content", "hello"),
        simple=False,
    ),
    Case(
        "make a new file called todo.md with the text buy milk",
        "write_file",
        _two("path", "todo.md", "content", "buy milk"),
        simple=False,
    ),
    Case(
        "write 'hello world' into greeting.txt",
        "write_file",
        _two("path", "greeting.txt", "content", "hello world"),
        simple=False,
    ),
    Case(
        "save the line x = 1 to vars.py",
        "write_file",
        _two("path", "vars.py", "content", "x = 1"),
        simple=False,
    ),
    Case(
        "put 42 in answer.txt",
        "write_file",
        _two("path", "answer.txt", "content", "42"),
        simple=False,
    ),
    Case(
        "new file out/log.txt, content: started",
        "write_file",
        _two("path", "out/log.txt", "content", "started"),
        simple=False,
    ),
    Case(
        "overwrite version.txt with 2.0.1",
        "write_file",
        _two("path", "version.txt", "content", "2.0.1"),
        simple=False,
    ),
    Case(
        "creat a file named list.csv that says a,b,c",
        "write_file",
        _two("path", "list.csv", "content", "a,b,c"),
        simple=False,
    ),
    Case(
        "store the word banana in fruit.txt",
        "write_file",
        _two("path", "fruit.txt", "content", "banana"),
        simple=False,
    ),
    Case(
        "fill empty.txt with the text nothing here",
        "write_file",
        _two("path", "empty.txt", "content", "nothing here"),
        simple=False,
    ),
    Case(
        "look for the word timeout in server/main.go",
        "search_content",
        _two("path", "server/main.go", "pattern", "timeout"),
        simple=False,
    ),
    Case(
        "find txt files inside the data folder",
        "search_files",
        _two("path", "data", "pattern", "txt"),
        simple=False,
    ),
    Case(
        "grep 'def main' in scripts/",
        "search_content",
        _two("path", "scripts", "pattern", "def main"),
        simple=False,
    ),
]

# A fourth set, written and committed alone for issue 30, before the runtime changed and
# before any tuning for it (the frozen set above had been looked at: its misses are
# named in docs/local-model.md). Other files, verbs and sentence shapes again; never tuned
# on. Its files exist in the workspace (HELDOUT_30_WORKSPACE). Five requests that repeated
# (or nearly) an example of agentcli/tools/examples.py were reworded before any run.
HELDOUT_30: list[Case] = [
    Case("please show me what notes/ideas.md says", "read_file", _path_is("notes/ideas.md")),
    Case("i need to look at the contents of app/models.py", "read_file", _path_is("app/models.py")),
    Case("what's the text of CONTRIBUTING.md", "read_file", _path_is("CONTRIBUTING.md")),
    Case("output the file config/prod.yaml", "read_file", _path_is("config/prod.yaml")),
    Case("let me read .env.example", "read_file", _path_is(".env.example")),
    Case("paste the contents of lib/utils.js here", "read_file", _path_is("lib/utils.js")),
    Case("show tsconfig.json", "read_file", _path_is("tsconfig.json")),
    Case("go through main.c and show it to me", "read_file", _path_is("main.c")),
    Case("open up the readme at docs/README.txt", "read_file", _path_is("docs/README.txt")),
    Case("what is inside the assets folder?", "list_directory", _path_is("assets", "assets/")),
    Case("list out the app directory", "list_directory", _path_is("app", "app/")),
    Case("show me everything in this project folder", "list_directory", _no_path_or()),
    Case("which files and folders are in config?", "list_directory", _path_is("config", "config/")),
    Case("what files are sitting in the top level here?", "list_directory", _no_path_or()),
    Case("what do we have in lib/", "list_directory", _path_is("lib", "lib/")),
    Case("find every javascript file", "search_files", _contains("pattern", "js")),
    Case("are there any .toml files?", "search_files", _contains("pattern", "toml")),
    Case("look for a file named schema.sql", "search_files", _contains("pattern", "schema")),
    Case("list all the markdown docs in the repo", "search_files", _contains("pattern", "md")),
    Case("which .c files exist?", "search_files", _contains("pattern", ".c")),
    Case("search the code for XXX", "search_content", _contains("pattern", "XXX")),
    Case(
        "where is the function load_users used",
        "search_content",
        _contains("pattern", "load_users"),
    ),
    Case(
        "find mentions of localhost in the project",
        "search_content",
        _contains("pattern", "localhost"),
    ),
    Case("hunt for TODO comments in the source", "search_content", _contains("pattern", "TODO")),
    Case(
        "in which modules is the sqlalchemy package mentioned?",
        "search_content",
        _contains("pattern", "sqlalchemy"),
    ),
    Case(
        "look for the string BEGIN PRIVATE in the files",
        "search_content",
        _contains("pattern", "BEGIN PRIVATE"),
    ),
    Case("what's 365*24", "calculator", _computes(8760)),
    Case("quick math: 1000 - 357", "calculator", _computes(643)),
    Case("evaluate (12 + 8) / 4", "calculator", _computes(5)),
    Case("how much is 3**4?", "calculator", _computes(81)),
    Case("work out 250 * 4 for me", "calculator", _computes(1000)),
    Case("what's 81 divided by 9", "calculator", _computes(9)),
    Case("show me the output of git branch -a", "run_shell", _contains("command", "git branch -a")),
    Case(
        "could you execute python3 --version",
        "run_shell",
        _contains("command", "python3 --version"),
    ),
    Case("start the tests with make check", "run_shell", _contains("command", "make check")),
    Case("in a shell, run df -h", "run_shell", _contains("command", "df -h")),
    Case("fire up docker compose up -d", "run_shell", _contains("command", "docker compose up -d")),
    Case("execute: uname -a", "run_shell", _contains("command", "uname -a")),
    Case("what kind of computer is this running on?", "system_info"),
    Case("how much RAM do i have", "system_info"),
    Case("which OS and architecture is this host?", "system_info"),
    Case(
        "fetch the page https://example.com/news",
        "fetch_url",
        _equals("url", "https://example.com/news"),
    ),
    Case(
        "read https://example.org/changelog.txt from the web",
        "fetch_url",
        _equals("url", "https://example.org/changelog.txt"),
    ),
    Case(
        "what does https://example.net/status say?",
        "fetch_url",
        _equals("url", "https://example.net/status"),
    ),
    Case("search online for how to center a div", "web_search", _contains("query", "center")),
    Case("google what the population of Canada is", "web_search", _contains("query", "Canada")),
    Case(
        "find me articles on the internet about solar panels",
        "web_search",
        _contains("query", "solar"),
    ),
    Case("web search: best python linters", "web_search", _contains("query", "linters")),
    Case("what is the difference between a list and a tuple?", None),
    Case("hi!", None),
    Case("who painted the Mona Lisa?", None),
    Case("write a limerick about a programmer", None),
    Case("ok thanks, bye", None),
    Case("what does CPU stand for?", None),
    Case("explain what an API is in simple words", None),
    Case("how do you say thank you in German?", None),
]

# The fourth set's two-argument requests (both arguments must be right).
HELDOUT_30_TWO_ARGS: list[Case] = [
    Case(prompt, tool, check, simple=False, two_args=True)
    for prompt, tool, check in (
        (
            "make a file called hello.py with print('hi')",
            "write_file",
            _two("path", "hello.py", "content", "print('hi')"),
        ),
        (
            "write done to status/result.txt",
            "write_file",
            _two("path", "status/result.txt", "content", "done"),
        ),
        (
            "save the text remember the milk in reminder.txt",
            "write_file",
            _two("path", "reminder.txt", "content", "remember the milk"),
        ),
        (
            "create todo.txt containing call mom",
            "write_file",
            _two("path", "todo.txt", "content", "call mom"),
        ),
        ("put version 1.2 into VERSION", "write_file", _two("path", "VERSION", "content", "1.2")),
        (
            "new file greeting.md that says Hello there",
            "write_file",
            _two("path", "greeting.md", "content", "Hello there"),
        ),
        (
            "store 3 apples in basket.txt",
            "write_file",
            _two("path", "basket.txt", "content", "3 apples"),
        ),
        (
            "search app/models.py for class",
            "search_content",
            _two("path", "app/models.py", "pattern", "class"),
        ),
        ("look for TODO inside lib", "search_content", _two("path", "lib", "pattern", "TODO")),
        (
            "find the word error in config/prod.yaml",
            "search_content",
            _two("path", "config/prod.yaml", "pattern", "error"),
        ),
        ("find yaml files in config", "search_files", _two("path", "config", "pattern", "yaml")),
        (
            "list the png files under assets",
            "search_files",
            _two("path", "assets", "pattern", "png"),
        ),
    )
]

# A fifth set, written and committed alone for issue 30's second round, before any change
# to the choice (the fourth set's results had been read: its misses are named in
# docs/local-model.md, so it is a development set now). Written in a user's words without
# looking at any set's per-case results, in the fourth set's shape (48 simple requests,
# 12 two-argument requests, 8 plain questions); never tuned on. Its files exist in the
# workspace (HELDOUT_30B_WORKSPACE).
HELDOUT_30B: list[Case] = [
    Case("can you show me the file src/server.ts", "read_file", _path_is("src/server.ts")),
    Case("tell me what docs/setup.md says", "read_file", _path_is("docs/setup.md")),
    Case("I want to see the contents of Cargo.toml", "read_file", _path_is("Cargo.toml")),
    Case("display pkg/handler.go", "read_file", _path_is("pkg/handler.go")),
    Case("read the changelog file HISTORY.rst", "read_file", _path_is("HISTORY.rst")),
    Case("print out the contents of scripts/build.sh", "read_file", _path_is("scripts/build.sh")),
    Case("what does the file .editorconfig look like?", "read_file", _path_is(".editorconfig")),
    Case("open web/index.css so I can see it", "read_file", _path_is("web/index.css")),
    Case("have a look at requirements-dev.txt", "read_file", _path_is("requirements-dev.txt")),
    Case("what's in the src folder?", "list_directory", _path_is("src", "src/")),
    Case("give me the list of files in docs", "list_directory", _path_is("docs", "docs/")),
    Case("show what files are in the root of this repo", "list_directory", _no_path_or()),
    Case("which files does the web directory contain?", "list_directory", _path_is("web", "web/")),
    Case("list what's here", "list_directory", _no_path_or()),
    Case("what is in pkg?", "list_directory", _path_is("pkg", "pkg/")),
    Case("find all the typescript files", "search_files", _contains("pattern", "ts")),
    Case("are there any .go files in this project?", "search_files", _contains("pattern", "go")),
    Case("where's the file named Makefile?", "search_files", _contains("pattern", "Makefile")),
    Case("show me every .sh file", "search_files", _contains("pattern", "sh")),
    Case("locate the csv files", "search_files", _contains("pattern", "csv")),
    Case("which files contain the word retry?", "search_content", _contains("pattern", "retry")),
    Case("grep the codebase for get_user", "search_content", _contains("pattern", "get_user")),
    Case(
        "where in the code do we use DATABASE_URL",
        "search_content",
        _contains("pattern", "DATABASE_URL"),
    ),
    Case("look for console.log in the code", "search_content", _contains("pattern", "console.log")),
    Case(
        "search for the phrase not implemented",
        "search_content",
        _contains("pattern", "not implemented"),
    ),
    Case(
        "which source files reference http_client?",
        "search_content",
        _contains("pattern", "http_client"),
    ),
    Case("what does 48 * 12 come to?", "calculator", _computes(576)),
    Case("calculate 1024 / 16", "calculator", _computes(64)),
    Case("give me 2.5 * 4", "calculator", _computes(10)),
    Case("solve 17 + 25 * 2", "calculator", _computes(67)),
    Case("what's 60 times 7", "calculator", _computes(420)),
    Case("can you do 900 / 30 for me", "calculator", _computes(30)),
    Case("run pytest -x", "run_shell", _contains("command", "pytest -x")),
    Case("please execute ls -l /tmp", "run_shell", _contains("command", "ls -l /tmp")),
    Case("check git diff --stat", "run_shell", _contains("command", "git diff --stat")),
    Case("install the dependencies with npm ci", "run_shell", _contains("command", "npm ci")),
    Case("type whoami in the shell", "run_shell", _contains("command", "whoami")),
    Case("can you run cargo test please", "run_shell", _contains("command", "cargo test")),
    Case("tell me the CPU model of this box", "system_info"),
    Case("is the disk almost full?", "system_info"),
    Case("which Linux distribution is installed here?", "system_info"),
    Case(
        "download the page at https://example.com/docs/intro",
        "fetch_url",
        _equals("url", "https://example.com/docs/intro"),
    ),
    Case(
        "fetch http://127.0.0.1:8080/health",
        "fetch_url",
        _equals("url", "http://127.0.0.1:8080/health"),
    ),
    Case(
        "what's on https://example.org/blog?",
        "fetch_url",
        _equals("url", "https://example.org/blog"),
    ),
    Case(
        "search the web for the latest python release", "web_search", _contains("query", "python")
    ),
    Case("look up online how to undo a git commit", "web_search", _contains("query", "undo")),
    Case(
        "find on the internet what a kubernetes pod is",
        "web_search",
        _contains("query", "kubernetes"),
    ),
    Case("do a web search for cheap flights to Rome", "web_search", _contains("query", "Rome")),
    Case("what is the boiling point of water?", None),
    Case("hey there", None),
    Case("tell me a fun fact about octopuses", None),
    Case("what does RAM stand for?", None),
    Case("write a two-line poem about coffee", None),
    Case("thank you so much!", None),
    Case("how many days are in a leap year?", None),
    Case("explain the difference between TCP and UDP", None),
]

# The fifth set's two-argument requests (both arguments must be right).
HELDOUT_30B_TWO_ARGS: list[Case] = [
    Case(prompt, tool, check, simple=False, two_args=True)
    for prompt, tool, check in (
        (
            "create hello.txt with the text hi there",
            "write_file",
            _two("path", "hello.txt", "content", "hi there"),
        ),
        (
            "write passed to results/ci.txt",
            "write_file",
            _two("path", "results/ci.txt", "content", "passed"),
        ),
        (
            "make a new file called notes/today.md containing meeting at 3",
            "write_file",
            _two("path", "notes/today.md", "content", "meeting at 3"),
        ),
        (
            "save hello world in greet.txt",
            "write_file",
            _two("path", "greet.txt", "content", "hello world"),
        ),
        (
            "create a file config.ini that says debug=true",
            "write_file",
            _two("path", "config.ini", "content", "debug=true"),
        ),
        (
            "put the word draft into stage.txt",
            "write_file",
            _two("path", "stage.txt", "content", "draft"),
        ),
        (
            "write the line import sys to main.py",
            "write_file",
            _two("path", "main.py", "content", "import sys"),
        ),
        (
            "search pkg/handler.go for func",
            "search_content",
            _two("path", "pkg/handler.go", "pattern", "func"),
        ),
        (
            "find the word TODO in src/server.ts",
            "search_content",
            _two("path", "src/server.ts", "pattern", "TODO"),
        ),
        (
            "look for retry inside the web folder",
            "search_content",
            _two("path", "web", "pattern", "retry"),
        ),
        ("find the go files in pkg", "search_files", _two("path", "pkg", "pattern", "go")),
        ("list the css files under web", "search_files", _two("path", "web", "pattern", "css")),
    )
]


def _edit(path: str, old: str, new: str) -> Check:
    """An edit of `path`: `old_text` holds `old` and `new_text` holds `new` (never a
    whole-file write: that is another tool, so the case is wrong)."""

    def check(args: dict[str, Any]) -> bool:
        return (
            _bare_path(args.get("path", "")) == path
            and old.lower() in str(args.get("old_text", "")).lower()
            and new.lower() in str(args.get("new_text", "")).lower()
        )

    return check


# The sixth set, for issue 41: written and committed alone before any change of issue 41,
# in other words than every earlier set (typos, terse shell words, long polite sentences,
# edits of existing files, folders to create, percentages). Never tuned on.
HELDOUT_41: list[Case] = [
    Case("shwo me the file ROADMAP.md", "read_file", _path_is("ROADMAP.md")),
    Case("cat conf/app.yaml", "read_file", _path_is("conf/app.yaml")),
    Case(
        "Could you please be so kind as to open the file called CREDITS.txt and show me "
        "what it says?",
        "read_file",
        _path_is("CREDITS.txt"),
    ),
    Case("raed src/lib.rs", "read_file", _path_is("src/lib.rs")),
    Case("ls assets", "list_directory", _path_is("assets", "assets/")),
    Case("wht files are in the build folder", "list_directory", _path_is("build", "build/")),
    Case(
        "I'd really appreciate it if you could list everything that is inside the fixtures "
        "directory, thank you",
        "list_directory",
        _path_is("fixtures", "fixtures/"),
    ),
    Case("make a folder called logs", "create_directory", _path_is("logs", "logs/")),
    Case("create a new directory named cache", "create_directory", _path_is("cache", "cache/")),
    Case(
        "please create a directory tmp/work for me",
        "create_directory",
        _path_is("tmp/work", "tmp/work/"),
    ),
    Case("serach for the word deprecated", "search_content", _contains("pattern", "deprecated")),
    Case("find where the word timeout appears", "search_content", _contains("pattern", "timeout")),
    Case(
        "Would you mind looking through the project for every place that mentions SECRET_TOKEN?",
        "search_content",
        _contains("pattern", "SECRET_TOKEN"),
    ),
    Case("grep TODO", "search_content", _contains("pattern", "TODO")),
    Case("find all the rust files", "search_files", _contains("pattern", "rs")),
    Case("any .toml files around?", "search_files", _contains("pattern", "toml")),
    Case("whats 15% of 80", "calculator", _computes(12)),
    Case("calcualte 250 * 4", "calculator", _computes(1000)),
    Case(
        "I was wondering if you could work out how much 1200 divided by 8 is",
        "calculator",
        _computes(150),
    ),
    Case("what is 20 percent of 450?", "calculator", _computes(90)),
    Case("git status", "run_shell", _equals("command", "git status")),
    Case("git log --oneline", "run_shell", _equals("command", "git log --oneline")),
    Case("pwd", "run_shell", _equals("command", "pwd")),
    Case("uname -a", "run_shell", _equals("command", "uname -a")),
    Case("could you run the date command for me please", "run_shell", _equals("command", "date")),
    Case("whats the disk space on this machine", "system_info"),
    Case("how much RAM is free on this box?", "system_info"),
    Case(
        "fetch the page https://example.net/docs",
        "fetch_url",
        _equals("url", "https://example.net/docs"),
    ),
    Case(
        "look up rust borrow checker on the web",
        "web_search",
        _contains("query", "borrow checker"),
    ),
    Case("what does CPU stand for?", None),
    Case("thx, that helped a lot", None),
    Case("could you explain in simple words what recursion is?", None),
    Case("write a limerick about a cat", None),
    Case("hi", None),
]

# The sixth set's requests with two or three arguments (each must be right); the edits
# name files that exist and hold the old text.
HELDOUT_41_TWO_ARGS: list[Case] = [
    Case(prompt, tool, check, simple=False, two_args=True)
    for prompt, tool, check in (
        (
            "in shopping.txt change eggs to apples",
            "edit_file",
            _edit("shopping.txt", "eggs", "apples"),
        ),
        (
            "replace the word draft with final in status.md",
            "edit_file",
            _edit("status.md", "draft", "final"),
        ),
        (
            "chnage port 8080 to 9090 in conf/app.yaml",
            "edit_file",
            _edit("conf/app.yaml", "8080", "9090"),
        ),
        (
            "Please could you edit ROADMAP.md so that it says beta instead of alpha",
            "edit_file",
            _edit("ROADMAP.md", "alpha", "beta"),
        ),
        ("swap red for blue in colors.txt", "edit_file", _edit("colors.txt", "red", "blue")),
        (
            "create notes/plan.md with the text ship it",
            "write_file",
            _two("path", "notes/plan.md", "content", "ship it"),
        ),
        (
            "write done into progress.txt",
            "write_file",
            _two("path", "progress.txt", "content", "done"),
        ),
        (
            "overwrite shopping.txt with the text nothing",
            "write_file",
            _two("path", "shopping.txt", "content", "nothing"),
        ),
        (
            "serach src/lib.rs for unwrap",
            "search_content",
            _two("path", "src/lib.rs", "pattern", "unwrap"),
        ),
        (
            "look for timeout in the conf folder",
            "search_content",
            _two("path", "conf", "pattern", "timeout"),
        ),
        ("find the yaml files in conf", "search_files", _two("path", "conf", "pattern", "yaml")),
    )
]

# Issue 41's development set: the issue's own examples and others like the held-out
# set's kinds, in other words (the changes of issue 41 were tuned on these only).
DEV_41: list[Case] = [
    Case("opne the file notes.txt", "read_file", _path_is("notes.txt")),
    Case("lsit the docs folder", "list_directory", _path_is("docs", "docs/")),
    Case("create a folder called drafts", "create_directory", _path_is("drafts", "drafts/")),
    Case("make a new directory out/reports", "create_directory", _path_is("out/reports")),
    Case("find the word database", "search_content", _contains("pattern", "database")),
    Case("what is 12% of 50?", "calculator", _computes(6)),
    Case("git diff --stat", "run_shell", _equals("command", "git diff --stat")),
    Case("whoami", "run_shell", _equals("command", "whoami")),
    Case(
        "would you be so kind as to run the uptime command for me please",
        "run_shell",
        _equals("command", "uptime"),
    ),
    Case("serch the code for TODO", "search_content", _contains("pattern", "TODO")),
    Case("thanks a lot, bye", None),
]
DEV_41_TWO_ARGS: list[Case] = [
    Case(prompt, tool, check, simple=False, two_args=True)
    for prompt, tool, check in (
        (
            "in notes.txt, replace milk with bread",
            "edit_file",
            _edit("notes.txt", "milk", "bread"),
        ),
        (
            "change example to sample in README.md",
            "edit_file",
            _edit("README.md", "example", "sample"),
        ),
        (
            "edit config.toml so it says prod instead of example",
            "edit_file",
            _edit("config.toml", "example", "prod"),
        ),
        (
            "rewrite notes.txt with the text fresh start",
            "write_file",
            _two("path", "notes.txt", "content", "fresh start"),
        ),
        (
            "write hello into brand_new.txt",
            "write_file",
            _two("path", "brand_new.txt", "content", "hello"),
        ),
    )
]

# Two-argument requests for development (the improvements for them were tuned here).
DEV_TWO_ARGS: list[Case] = [
    Case(prompt, tool, check, simple=False, two_args=True)
    for prompt, tool, check in (
        (
            "write the text goodbye to farewell.txt",
            "write_file",
            _two("path", "farewell.txt", "content", "goodbye"),
        ),
        (
            "make readme2.md saying work in progress",
            "write_file",
            _two("path", "readme2.md", "content", "work in progress"),
        ),
        ("save 3.14 into pi.txt", "write_file", _two("path", "pi.txt", "content", "3.14")),
        (
            "create a file called names.txt with alice",
            "write_file",
            _two("path", "names.txt", "content", "alice"),
        ),
        (
            "add a file draft.txt that contains first draft",
            "write_file",
            _two("path", "draft.txt", "content", "first draft"),
        ),
        ("write print(1) to run.py", "write_file", _two("path", "run.py", "content", "print(1)")),
        (
            "put the text ok into status.txt",
            "write_file",
            _two("path", "status.txt", "content", "ok"),
        ),
        (
            "search for import in src/app.py",
            "search_content",
            _two("path", "src/app.py", "pattern", "import"),
        ),
        ("find py files under tests", "search_files", _two("path", "tests", "pattern", "py")),
        ("grep TODO in docs/", "search_content", _two("path", "docs", "pattern", "TODO")),
    )
]


def _as_two_args(cases: list[Case]) -> list[Case]:
    return [replace(case, two_args=True) for case in cases]


# `--set`: the development sets (the provider was developed and tuned on these) and the
# frozen held-out set (never tuned on). "dev" is every development set.
SETS = {
    "original": CASES,
    "heldout": HELDOUT,
    "two-args": DEV_TWO_ARGS,
    "frozen": FROZEN + _as_two_args(FROZEN_TWO_ARGS),
    "heldout30": HELDOUT_30 + HELDOUT_30_TWO_ARGS,
    "heldout30b": HELDOUT_30B + HELDOUT_30B_TWO_ARGS,
    "heldout41": HELDOUT_41 + HELDOUT_41_TWO_ARGS,
    "dev41": DEV_41 + DEV_41_TWO_ARGS,
}
SETS["dev"] = (
    CASES
    + HELDOUT
    + DEV_TWO_ARGS
    + SETS["frozen"]
    + SETS["heldout30"]
    + SETS["heldout30b"]
    + SETS["dev41"]
)
SET_LABELS = {
    "original": "development: first set",
    "heldout": "development: second set (written held out, tuned on since)",
    "two-args": "development: two-argument requests",
    "frozen": "frozen before issue 18's changes, looked at since (development for issue 30)",
    "heldout30": "frozen for issue 30 before its changes, looked at since (development now)",
    "heldout30b": "frozen for issue 30's second round before its changes (development now)",
    "heldout41": "held out: frozen for issue 41 before its changes",
    "dev41": "development: issue 41's requests (edits, folders, typos, bare commands)",
    "dev": "development: all",
}

FORMATS: dict[str, dict[str, Any]] = {
    "fewshot-core": {},
    "nocopy-core": {"copy_arguments": False},
    "greedy-core": {"choice": "greedy"},
    "fewshot-all": {"tools": "all"},
    "fewshot-req": {"arguments": "required"},
    "zeroshot-core": {"few_shot": False},
    "plain-core": {"prompt_style": "plain"},
    "server-tools": {"baseline": True},
    "own-core": {"argument_prompt": "own"},
    "channel-core": {"channel_weight": 1.0},
    "nocal-core": {"calibration": 0},
    "old-core": {"argument_prompt": "own", "channel_weight": 1.0},  # issue 18's defaults
    "nospell-core": {"spelled_arguments": False},
    "nofit-core": {"fit_weight": 0.0},
}


def _without(scores: Any, weights: Any, *, model: bool = True, **changes: float) -> str:
    """The scored choice with some weights changed and, with `model=False`, the model's
    parts taken out."""
    from agentcli.providers.local import scoring
    from agentcli.records import replace as changed

    return scoring.choose(
        scores if model else scoring.prior_only(scores), changed(weights, **changes)
    )


# The parts of the scored choice, each taken out in turn (computed from the same scores:
# the tool choice only; the arguments are those of the combined choice)
ABLATIONS: dict[str, Callable[[Any, Any], str]] = {
    "model + examples (no fit)": lambda s, w: _without(s, w, fit_weight=0.0),
    "model + fit (no examples)": lambda s, w: _without(s, w, prior_weight=0.0),
    "examples only": lambda s, w: _without(s, w, model=False, fit_weight=0.0),
    "fit only": lambda s, w: _without(s, w, model=False, prior_weight=0.0),
    "no calibration": lambda s, w: _without(s, w, calibration=0.0),
    "no answer bias": lambda s, w: _without(s, w, answer_bias=0.0),
}


@dataclass
class Outcome:
    case: Case
    tool: str | None
    arguments: dict[str, Any] | None
    seconds: float
    runaway: bool
    error: str | None = None
    # The scored choice's tool with the examples' prior taken out, and with the model
    # taken out (None: answering; both None when no scored choice was made)
    model_only: str | None = None
    prior_only: str | None = None
    scored: bool = False
    chosen: str | None = None  # the combined choice, before its arguments were written
    # the choice with one part of the scored choice taken out (ABLATIONS), by name
    ablations: dict[str, str | None] = field(default_factory=dict)

    @property
    def right_tool(self) -> bool:
        return self.tool == self.case.tool

    def right_by(self, part: str) -> bool:
        """Whether the choice of `part` ("model", "prior" or "combined") was right."""
        combined = self.chosen if self.scored else self.tool
        chosen = {"model": self.model_only, "prior": self.prior_only}.get(part, combined)
        if part in ABLATIONS:
            chosen = self.ablations.get(part, "?")
        return chosen == self.case.tool

    @property
    def right(self) -> bool:
        if not self.right_tool:
            return False
        if self.case.tool is None:
            return True
        return isinstance(self.arguments, dict) and bool(self.case.check(self.arguments))


# The project the prompts are asked in: the files and folders they name exist, as they
# would when a user asks about their own project.
WORKSPACE_ENTRIES = (
    "README.md",
    "notes.txt",
    "src/app.py",
    "config.toml",
    "CHANGELOG.md",
    "docs/index.md",
    "requirements.txt",
    "Makefile",
    "docs/guide.md",
    "pyproject.toml",
    "tests/test_app.py",
)
# The files and folders the frozen set names.
FROZEN_WORKSPACE = (
    "server/main.go",
    "LICENSE.txt",
    "data/users.csv",
    "todo.md",
    "scripts/deploy.sh",
    "package.json",
    "docs/api.rst",
    "index.html",
    "setup.cfg",
    "settings.json",
    "Dockerfile",
)
# The files and folders the fourth set names.
HELDOUT_30_WORKSPACE = (
    "notes/ideas.md",
    "app/models.py",
    "CONTRIBUTING.md",
    "config/prod.yaml",
    ".env.example",
    "lib/utils.js",
    "tsconfig.json",
    "main.c",
    "docs/README.txt",
    "assets/logo.png",
)
# The files and folders the fifth set names.
HELDOUT_30B_WORKSPACE = (
    "src/server.ts",
    "docs/setup.md",
    "Cargo.toml",
    "pkg/handler.go",
    "HISTORY.rst",
    "scripts/build.sh",
    ".editorconfig",
    "web/index.css",
    "requirements-dev.txt",
)


# The files the sixth set names, with what they hold (its edits change words in them).
HELDOUT_41_WORKSPACE = {
    "ROADMAP.md": "# Roadmap\n\nThe alpha ships in May.\n",
    "conf/app.yaml": "port: 8080\ntimeout: 30\n",
    "CREDITS.txt": "Thanks to everyone.\n",
    "src/lib.rs": "pub fn load() { read().unwrap() }\n",
    "assets/icon.svg": "<svg/>\n",
    "build/out.txt": "built\n",
    "fixtures/one.json": "{}\n",
    "shopping.txt": "eggs\nflour\n",
    "status.md": "status: draft\n",
    "colors.txt": "red\ngreen\n",
}


def make_workspace() -> Path:
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="agentcli-bench-"))
    entries = dict.fromkeys(
        WORKSPACE_ENTRIES + FROZEN_WORKSPACE + HELDOUT_30_WORKSPACE + HELDOUT_30B_WORKSPACE,
        "example\n",
    )
    for entry, text in {**entries, **HELDOUT_41_WORKSPACE}.items():
        (root / entry).parent.mkdir(parents=True, exist_ok=True)
        (root / entry).write_text(text, encoding="utf-8")
    return root


def registry_tools() -> list[dict[str, Any]]:
    from agentcli.assembly import build_registry
    from agentcli.config import load_config

    config = load_config(ROOT, flags={}, flag_labels={}, env={})
    return [tool.spec() for tool in build_registry(config, None)]


async def run_provider(
    model: str,
    options: dict[str, Any],
    tools: list[dict],
    cases: list[Case],
    *,
    full_answers: bool = False,
) -> list[Outcome]:
    """Each case through the provider; a step that answers in words is stopped at its
    first text (the decision is what is measured) unless `full_answers`."""
    from agentcli.conversation import events as ev
    from agentcli.conversation.messages import Message
    from agentcli.providers.base import ModelRequest
    from agentcli.providers.local import LocalProvider, scoring
    from agentcli.providers.local.decision import ANSWER

    def _tool(name: str) -> str | None:
        return None if name == ANSWER else name

    provider = LocalProvider(
        model, options=options, progress=lambda text: None, workspace=make_workspace()
    )
    outcomes = []
    for case in cases:
        request = ModelRequest(system="", messages=[Message.user(case.prompt)], tools=tools)
        started = time.monotonic()
        name, args_text, error = None, "", None
        try:
            async with contextlib.aclosing(provider.stream(request)) as stream:
                async for item in stream:
                    if isinstance(item, ev.ToolCallStart):
                        name = item.tool_call_name
                    elif isinstance(item, ev.ToolCallArgs):
                        args_text += item.delta
                    elif isinstance(item, ev.TextMessageStart) and not full_answers:
                        break  # answering was decided: its text is not what is measured
        except Exception as exc:  # a bench reports, never stops
            error = f"{type(exc).__name__}: {exc}"
        seconds = time.monotonic() - started
        runaway = any(g.finish_reason in ("length", "time") for g in provider.last_generations)
        try:
            arguments = json.loads(args_text) if name else None
        except ValueError:
            arguments = None
        outcome = Outcome(case, name, arguments, seconds, runaway, error)
        if provider.last_choice is not None:
            weights = provider.options.weights()
            scores = provider.last_choice
            outcome.scored = True
            outcome.model_only = _tool(scoring.choose(scores, scoring.model_only(weights)))
            outcome.prior_only = _tool(scoring.choose(scoring.prior_only(scores), weights))
            outcome.chosen = _tool(scoring.choose(scores, weights))
            outcome.ablations = {
                name: _tool(choose(scores, weights)) for name, choose in ABLATIONS.items()
            }
        outcomes.append(outcome)
    await provider.aclose()
    shutil.rmtree(provider.workspace, ignore_errors=True)
    return outcomes


def run_baseline(model: str, tools: list[dict], cases: list[Case]) -> list[Outcome]:
    """llama.cpp's own tool calling: its server's chat completions with `tools` (the
    chat template's tool format, or its generic one, with its grammar), no prompt or
    router of ours. Not streamed."""
    from agentcli.providers.local.engine import get_engine
    from agentcli.providers.local.models import resolve_model_file

    path, _ = resolve_model_file(model)
    engine = get_engine(path, n_ctx=4096, n_threads=_threads(), label=model)
    wire = [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t["description"],
                "parameters": t["parameters"],
            },
        }
        for t in tools
    ]
    outcomes = []
    for case in cases:
        started = time.monotonic()
        name, arguments, error, runaway = None, None, None, False
        try:
            with engine.lock:
                response = engine.server.handle_chat_completions(
                    {
                        "messages": [{"role": "user", "content": case.prompt}],
                        "tools": wire,
                        "tool_choice": "auto",
                        "max_tokens": 128,
                        "temperature": 0,
                    }
                )
            choice = response["choices"][0]
            runaway = choice.get("finish_reason") == "length"
            calls = choice["message"].get("tool_calls") or []
            if calls:
                name = calls[0]["function"]["name"]
                try:
                    arguments = json.loads(calls[0]["function"]["arguments"])
                except ValueError:
                    arguments = None
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"[:200]
        outcomes.append(Outcome(case, name, arguments, time.monotonic() - started, runaway, error))
    return outcomes


def calibrate(model: str, tools: list[dict]) -> None:
    """Chooses the scored choice's weights honestly: leave-one-out over the provider's own
    example bank (each example's request, with the other examples shown and in the
    prior), never over the benchmark's prompts. Prints the best weights."""
    import itertools

    from agentcli.conversation.messages import Message
    from agentcli.providers.local import LocalProvider, decision, router, scoring

    provider = LocalProvider(model, progress=lambda t: None)
    engine = provider.load()
    offered = router.offered_tools(tools, "core")

    async def collect() -> list[tuple[str, Any]]:
        rows = []
        for example in router.examples_for(offered):
            messages = [Message.user(example.request)]
            shown = router.select_examples(example.request, offered, exclude=example.request)
            text = provider.decision_text(engine, offered, messages, shown)
            prompt = engine.tokenize(text + decision.decision_prefix())
            scores = await provider.choice_scores(
                engine, offered, messages, shown, prompt, exclude=example.request
            )
            rows.append((example.tool, scores))
        return rows

    rows = asyncio.run(collect())
    grid = itertools.product((0, 0.5, 1), (0, 0.5, 1), (0, 2, 4, 8, 12), (-1, 0, 1, 2))
    results = []
    for calibration, channel, prior, bias in grid:
        weights = scoring.ChoiceWeights(calibration, channel, prior, bias)
        right = 0
        for expected, scores in rows:
            final = scoring.combine_scores(scores, weights)
            right += scores.candidates[max(range(len(final)), key=final.__getitem__)] == expected
        results.append((right, weights))
    results.sort(key=lambda item: item[0], reverse=True)
    for right, weights in results[:10]:
        print(f"calibrate {model}: {right}/{len(rows)} right (leave-one-out) with {weights}")
    defaults = provider.options.weights()
    right = next(r for r, w in results if w == defaults)
    print(f"calibrate {model}: the defaults {defaults}: {right}/{len(rows)}")


def _threads() -> int:
    from agentcli.providers.local.engine import default_threads

    return default_threads()


PARTS = ("model", "prior", "combined")


def summarize(outcomes: list[Outcome]) -> dict[str, Any]:
    """Shares right: of the tool choice by each part (model only, prior only, combined;
    None when the format makes no scored choice), and of tool and arguments together
    (combined: the arguments are always the model's, under the grammar), for the simple
    single-tool requests, the two-argument requests and the plain questions."""
    calls = [o for o in outcomes if o.case.tool is not None]
    groups = {
        "simple": [o for o in calls if o.case.simple],
        "two": [o for o in calls if o.case.two_args],
        "no_tool": [o for o in outcomes if o.case.tool is None],
    }
    seconds = [o.seconds for o in outcomes]

    def share(items: list[Outcome], test: Callable[[Outcome], bool]) -> float | None:
        return sum(1 for o in items if test(o)) / len(items) if items else None

    summary: dict[str, Any] = {
        "tool_right": share(calls, lambda o: o.right_tool),
        "args_right": share(calls, lambda o: o.right),
        "all_right": share(outcomes, lambda o: o.right) or 0.0,
        "mean_s": statistics.mean(seconds),
        "max_s": max(seconds),
        "runaways": sum(1 for o in outcomes if o.runaway),
        "errors": sum(1 for o in outcomes if o.error),
        "n": len(outcomes),
        "scored": all(o.scored for o in outcomes),
    }
    for group, items in groups.items():
        summary[f"{group}_n"] = len(items)
        summary[f"{group}_right"] = share(items, lambda o: o.right)
        for part in PARTS:
            right = share(items, lambda o, part=part: o.right_by(part))
            summary[f"{group}_{part}"] = right if summary["scored"] or part == "combined" else None
        for part in ABLATIONS:
            right = share(items, lambda o, part=part: o.right_by(part))
            summary[f"{group}_{part}"] = right if summary["scored"] else None
    return summary


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


TABLE_HEAD = (
    "| set | simple single-tool requests: model only | prior only | combined | combined, "
    "tool+args | two-argument requests: model only | prior only | combined | combined, "
    "tool+args | plain questions w/o tool (combined) | mean s/step |"
)


def table_row(label: str, s: dict[str, Any]) -> str:
    cells = [f"{label} ({s['simple_n']} + {s['two_n']} + {s['no_tool_n']})"]
    for group in ("simple", "two"):
        cells += [_pct(s[f"{group}_{part}"]) for part in PARTS]
        cells.append(_pct(s[f"{group}_right"]))
    cells += [_pct(s["no_tool_combined"]), f"{s['mean_s']:.1f} ({s['runaways']} runaways)"]
    return "| " + " | ".join(cells) + " |"


def print_tables(rows: list[tuple[str, str, str, dict[str, Any]]]) -> None:
    print(f"\n{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    for model, fmt in dict.fromkeys((r[0], r[1]) for r in rows):
        print(f"\n{model}, {fmt} (requests: simple + two-argument + plain questions)\n")
        print(TABLE_HEAD)
        print("|---" * (TABLE_HEAD.count("|") - 1) + "|")
        for _, _, set_name, s in (r for r in rows if r[:2] == (model, fmt)):
            print(table_row(SET_LABELS[set_name], s))
    for model, fmt in dict.fromkeys((r[0], r[1]) for r in rows):
        scored = [r for r in rows if r[:2] == (model, fmt) and r[3]["scored"]]
        if not scored:
            continue
        head = "| set | " + " | ".join(["combined", *ABLATIONS]) + " |"
        print(f"\n{model}, {fmt}: the tool choice with one part taken out (simple / two-arg)\n")
        print(head)
        print("|---" * (head.count("|") - 1) + "|")
        for _, _, set_name, s in scored:
            cells = [
                f"{_pct(s[f'simple_{part}'])} / {_pct(s[f'two_{part}'])}"
                for part in ("combined", *ABLATIONS)
            ]
            print(f"| {set_name} | " + " | ".join(cells) + " |")
    for model, fmt, set_name, s in rows:
        if set_name == HELD_OUT and s["simple_right"] is not None:
            verdict = "PASS" if s["simple_right"] >= TARGET else "FAIL"
            print(
                f"\n{model} {fmt}: {s['simple_right']:.0%} of the held-out set's simple requests "
                f"right, tool and arguments (target {TARGET:.0%}): {verdict}"
            )


def load_rows(files: list[str]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """The rows of earlier runs' --json files (the shards of one run, say), each case
    checked again against its set."""
    grouped: dict[tuple[str, str, str], list[Outcome]] = {}
    for file in files:
        for item in json.loads(Path(file).read_text(encoding="utf-8")):
            case = next(c for c in SETS[item["set"]] if c.prompt == item["prompt"])
            outcome = Outcome(
                case,
                item["tool"],
                item["arguments"],
                item["seconds"],
                item["runaway"],
                item["error"],
                item["model_only"],
                item["prior_only"],
                item.get("scored", True),
                item.get("chosen", item["tool"]),
                item.get("ablations", {}),
            )
            if "chosen" not in item and item["runaway"]:
                continue  # (older files) the choice is unknown when its arguments ran out
            grouped.setdefault((item["model"], item["format"], item["set"]), []).append(outcome)
    return [(*key, summarize(outcomes)) for key, outcomes in grouped.items()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="smollm2-135m")
    parser.add_argument("--formats", default="fewshot-core", help=", ".join(FORMATS))
    parser.add_argument(
        "--set",
        default="all",
        choices=["all", *SETS],
        help="which prompts (default: all, each set in its own row; dev: every development set)",
    )
    parser.add_argument("--json", help="also write every outcome to this file")
    parser.add_argument(
        "--shard",
        default="1/1",
        help="I/N: run only every N-th case from the I-th (run the shards in parallel, "
        "then --summarize their --json files)",
    )
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: the cores)")
    parser.add_argument(
        "--call-seconds",
        type=float,
        help="the bound of a tool-calling step (default: the provider's, 30 s); raise it on a "
        "loaded machine so that slowness is not counted as a wrong call",
    )
    parser.add_argument(
        "--summarize", nargs="+", metavar="JSON", help="only print the table of these --json files"
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="print every case")
    parser.add_argument(
        "--full-answers",
        action="store_true",
        help="let a step that answers write its whole answer (by default it is stopped at "
        "its first text: the seconds per step are then the decision's)",
    )
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="only choose the scored choice's weights on the example bank (leave-one-out)",
    )
    args = parser.parse_args()

    from agentcli.providers.local import install_hint, local_available

    names = [name for name in SETS if name != "dev"] if args.set == "all" else [args.set]
    if args.summarize:
        print_tables(load_rows(args.summarize))
        return 0
    tools = registry_tools()
    index, count = (int(n) for n in args.shard.split("/"))
    if args.calibrate:
        for model in args.models.split(","):
            calibrate(model, tools)
        return 0
    rows, dump = [], []
    for model in args.models.split(","):
        if not local_available(model):
            print(f"{model}: not installed ({install_hint()})")
            continue
        for fmt in args.formats.split(","):
            for set_name in names:
                cases = SETS[set_name][index - 1 :: count]
                options = dict(FORMATS[fmt])
                if args.threads:
                    options["n_threads"] = args.threads
                if args.call_seconds:
                    options["call_seconds"] = args.call_seconds
                if options.pop("baseline", False):
                    outcomes = run_baseline(model, tools, cases)
                else:
                    outcomes = asyncio.run(
                        run_provider(model, options, tools, cases, full_answers=args.full_answers)
                    )
                summary = summarize(outcomes)
                rows.append((model, fmt, set_name, summary))
                for o in outcomes:
                    dump.append(
                        {
                            "model": model,
                            "format": fmt,
                            "set": set_name,
                            "prompt": o.case.prompt,
                            "expected": o.case.tool,
                            "tool": o.tool,
                            "model_only": o.model_only,
                            "prior_only": o.prior_only,
                            "scored": o.scored,
                            "chosen": o.chosen,
                            "ablations": o.ablations,
                            "arguments": o.arguments,
                            "right": o.right,
                            "seconds": round(o.seconds, 2),
                            "runaway": o.runaway,
                            "error": o.error,
                        }
                    )
                    if args.verbose:
                        mark = "ok " if o.right else ("~  " if o.right_tool else "XX ")
                        print(
                            f"  {mark}{o.case.prompt!r} -> {o.tool} {json.dumps(o.arguments)}"
                            f" (model only: {o.model_only}, prior only: {o.prior_only})"
                            f" {o.seconds:.1f}s{' RUNAWAY' if o.runaway else ''}"
                            f"{' ' + o.error if o.error else ''}"
                        )
                print(
                    f"{model} {fmt} {set_name}: simple {summary['simple_n']} "
                    f"(model/prior/combined/+args) "
                    + "/".join(_pct(summary[f"simple_{p}"]) for p in (*PARTS, "right"))
                    + f"; two-arg {summary['two_n']} "
                    + "/".join(_pct(summary[f"two_{p}"]) for p in (*PARTS, "right"))
                    + f"; no-tool {_pct(summary['no_tool_combined'])}; "
                    f"mean {summary['mean_s']:.2f}s max {summary['max_s']:.1f}s "
                    f"runaways {summary['runaways']} errors {summary['errors']}",
                    flush=True,
                )

    print_tables(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(dump, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
