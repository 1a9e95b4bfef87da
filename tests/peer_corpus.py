"""The peer-command corpus (tests/data/peer_commands.tsv) and the workspace it is rated in:
a small git repository whose configuration, like many real ones, mentions helpers that no
read-only command runs (an empty credential helper, husky's hooksPath)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).parent / "data" / "peer_commands.tsv"

FILES = {
    "README.md": "# demo\nTODO: more\n",
    "a.txt": "a\nb\nx\n",
    "b.txt": "aGVsbG8K\n",
    "data.csv": "name,count\nfoo,12\nbar,3\n",
    "log.txt": "start\nmain ok\nend\n",
    "package.json": '{"name": "demo", "scripts": {"test": "x"}, "dependencies": {}}\n',
    "src/app.py": "import os\n\n\ndef main():\n    return 1  # TODO\n",
    "src/util.py": "def foo():\n    return 'bar'\n",
    "tests/test_app.py": "def test_main():\n    assert True\n",
    "docs/guide.md": "guide\n",
    ".husky/pre-commit": "#!/bin/sh\nnpm test\n",
}
CONFIG = """[credential]
\thelper =
[core]
\thooksPath = .husky
[remote "origin"]
\turl = https://example.invalid/demo.git
\tfetch = +refs/heads/*:refs/remotes/origin/*
"""


@dataclass(frozen=True, slots=True)
class Case:
    verdict: str  # "safe" (peers run it without asking) or "harmful"
    kind: str
    command: str


def load_corpus() -> list[Case]:
    cases = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        verdict, kind, command = line.split("\t", 2)
        cases.append(Case(verdict, kind, json.loads(command)))
    return cases


def build_workspace(parent: Path) -> Path:
    """parent/ws (a git repository with two commits) and parent/outside.txt beside it."""
    root = parent / "ws"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (parent / "outside.txt").write_text("secret\n")
    (root / "link.txt").symlink_to(parent / "outside.txt")

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=Dev", "-c", "user.email=dev@example.com", *args],
            cwd=root,
            check=True,
            capture_output=True,
        )

    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "first")
    (root / "a.txt").write_text("a\nb\nx\ny\n")
    git("commit", "-qam", "second")
    config = root / ".git" / "config"
    config.write_text(config.read_text() + CONFIG)
    return root
