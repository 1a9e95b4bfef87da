"""`/init`: an AGENTS.md skeleton drawn from the workspace — the project's name, the
languages and build files found, a guess at the test command, the top-level layout — with
the parts only a person knows left as prompts to fill in."""

from __future__ import annotations

import itertools
import json
import re
import tomllib
from collections import Counter
from pathlib import Path

from agentcli.regular_files import read_text

MAX_FILES = 20_000  # a huge tree is sampled, not walked whole
LAYOUT_ENTRIES = 15

LANGUAGES = {
    ".py": "Python",
    ".js": "JavaScript",
    ".mjs": "JavaScript",
    ".ts": "TypeScript",
    ".tsx": "TypeScript",
    ".jsx": "JavaScript",
    ".go": "Go",
    ".rs": "Rust",
    ".java": "Java",
    ".kt": "Kotlin",
    ".c": "C",
    ".h": "C",
    ".cc": "C++",
    ".cpp": "C++",
    ".hpp": "C++",
    ".cs": "C#",
    ".rb": "Ruby",
    ".php": "PHP",
    ".swift": "Swift",
    ".scala": "Scala",
    ".sh": "Shell",
    ".bash": "Shell",
    ".lua": "Lua",
    ".r": "R",
    ".jl": "Julia",
    ".ex": "Elixir",
    ".exs": "Elixir",
    ".hs": "Haskell",
    ".zig": "Zig",
    ".dart": "Dart",
}
BUILD_FILES = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "tox.ini",
    "noxfile.py",
    "package.json",
    "Cargo.toml",
    "go.mod",
    "Makefile",
    "CMakeLists.txt",
    "meson.build",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "Gemfile",
    "composer.json",
    "mix.exs",
    "Dockerfile",
    "justfile",
)


def skeleton(root: Path) -> str:
    files = _files(root)
    found = [name for name in BUILD_FILES if (root / name).is_file()]
    name = project_name(root)
    languages = Counter(
        LANGUAGES[s] for s in (Path(f).suffix.lower() for f in files) if s in LANGUAGES
    )
    shown = ", ".join(f"{lang} ({_files_count(n)})" for lang, n in languages.most_common(5))
    lines = [
        f"# {name}",
        "",
        "Instructions for coding agents working in this project (agentcli, Codex and",
        "others read AGENTS.md). Keep it short; fill in the parts in parentheses.",
        "",
        "## Project",
        "",
        "(What it does and for whom, in one or two sentences.)",
        "",
        "## Languages and build",
        "",
        f"- Languages: {shown or '(none recognised)'}",
        f"- Build files: {', '.join(found) or '(none found)'}",
        "",
        "## Commands",
        "",
        f"- Test: `{test_command(root, found)}`",
        "- (Lint, format, build, run: the exact commands.)",
        "",
        "## Layout",
        "",
        *layout(root, files),
        "",
        "## Conventions",
        "",
        "- (Code style, naming, what not to touch, how to write commits.)",
        "",
    ]
    return "\n".join(lines)


def _files(root: Path) -> list[str]:
    from agentcli.tools.ignore import Tree

    walk = Tree(str(root), "").walk()
    return [f for f in itertools.islice(walk, MAX_FILES) if not _hidden(f)]


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


def project_name(root: Path) -> str:
    """From pyproject.toml, package.json, Cargo.toml or go.mod; else the directory's."""
    for file, read in (
        ("pyproject.toml", lambda d: d["project"]["name"]),
        ("Cargo.toml", lambda d: d["package"]["name"]),
    ):
        try:
            return str(read(tomllib.loads(read_text(root / file))))
        except (OSError, ValueError, KeyError, TypeError):
            pass
    try:
        return str(json.loads(read_text(root / "package.json"))["name"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        text = read_text(root / "go.mod")
        if found := re.search(r"^module\s+(\S+)", text, re.MULTILINE):
            return found.group(1)
    except (OSError, UnicodeDecodeError):
        pass
    return root.name


def test_command(root: Path, found: list[str]) -> str:
    def text(name: str) -> str:
        try:
            return read_text(root / name, errors="replace")
        except OSError:
            return ""

    if "package.json" in found:
        try:
            if json.loads(text("package.json")).get("scripts", {}).get("test"):
                return "npm test"
        except (ValueError, AttributeError):
            pass
    if "Makefile" in found and re.search(r"^test:", text("Makefile"), re.MULTILINE):
        return "make test"
    if "Cargo.toml" in found:
        return "cargo test"
    if "go.mod" in found:
        return "go test ./..."
    if "tox.ini" in found:
        return "tox"
    if {"pyproject.toml", "setup.py", "setup.cfg"} & set(found) or (root / "tests").is_dir():
        return "python -m pytest"
    return "(the command that runs the tests)"


def layout(root: Path, files: list[str]) -> list[str]:
    """The top-level directories (with how many files each holds) and files."""
    counts = Counter(f.split("/", 1)[0] for f in files if "/" in f)
    tops = [f for f in files if "/" not in f]
    entries = [f"- `{d}/` ({_files_count(counts[d])}): (what is in it)" for d in sorted(counts)]
    entries += [f"- `{f}`" for f in sorted(tops) if f != "AGENTS.md"]
    if len(entries) > LAYOUT_ENTRIES:
        more = len(entries) - LAYOUT_ENTRIES
        entries = [*entries[:LAYOUT_ENTRIES], f"- … and {more} more"]
    return entries or ["- (empty)"]


def _files_count(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"
