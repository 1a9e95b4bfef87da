"""docs/extending.md's worked example, as a third party would use it: its files are taken
from the document itself, built into a package by pip, installed beside agentcli (a
directory on PYTHONPATH, so the test venv stays as it ships) and run through the installed
`agentcli` — a provider that calls a tool and a tool, both from entry points."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import RunCli

DOC = Path(__file__).parent.parent / "docs" / "extending.md"
# A file of the example: "`NAME`:" on its own line, then a fenced block.
FILE = re.compile(r"^`([\w./-]+)`:\n\n```\w*\n(.*?)^```", re.M | re.S)


def example_files() -> dict[str, str]:
    section = DOC.read_text().split("### A worked example", 1)[1]
    return dict(FILE.findall(section))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example built and installed into a directory of its own."""
    source = tmp_path_factory.mktemp("agentcli-canned")
    for name, text in example_files().items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text)
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return target


def test_the_example_is_whole() -> None:
    files = example_files()
    assert set(files) == {
        "pyproject.toml",
        "agentcli_canned/__init__.py",
        "agentcli_canned/tools.py",
        "agentcli_canned/providers.py",
    }
    for name, text in files.items():
        if name.endswith(".py"):
            compile(text, name, "exec")


def test_a_provider_and_a_tool_written_from_the_docs_run(
    installed: Path, run_cli: RunCli, cli_home: Path
) -> None:
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[providers.canned]\ntype = "canned"\n')
    env = {"PYTHONPATH": os.pathsep.join([str(installed), os.environ.get("PYTHONPATH", "")])}

    result = run_cli(["run", "--model", "canned:demo", "hello there"], env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "The tool said: HELLO THERE!" in result.stdout

    listed = run_cli(["plugins", "--json"], env=env, timeout=60)
    rows = json.loads(listed.stdout)
    text = json.dumps(rows)
    assert "agentcli-canned" in text and "shout" in text and "canned" in text


def test_a_provider_without_a_model_is_refused_in_one_line(
    installed: Path, run_cli: RunCli, cli_home: Path, tmp_path: Path
) -> None:
    """The example with its `self.model = ...` line left out (the mistake the docs once
    invited): one line naming what is missing, before anything runs."""
    broken = tmp_path / "broken"
    package = broken / "agentcli_canned"
    package.mkdir(parents=True)
    for name in ("__init__.py", "tools.py"):
        (package / name).write_text((installed / "agentcli_canned" / name).read_text())
    providers = (installed / "agentcli_canned" / "providers.py").read_text()
    assert "        self.model = settings.model.name\n" in providers
    (package / "providers.py").write_text(
        providers.replace("        self.model = settings.model.name\n", "")
    )
    for info in installed.glob("*.dist-info"):
        subprocess.run(["cp", "-r", str(info), str(broken)], check=True)
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[providers.canned]\ntype = "canned"\n')

    result = run_cli(["run", "--model", "canned:demo", "hello"], env={"PYTHONPATH": str(broken)})
    assert result.returncode != 0
    [line] = result.stderr.strip().splitlines()
    assert "without model" in line and "docs/extending.md" in line, line
    assert "The tool said" not in result.stdout
