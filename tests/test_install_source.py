"""The command that adds an extra names where this agentcli came from (agentcli is not on
PyPI): a checkout, editable or not, a wheel or a git URL, or an index — and the no-model
message of the installed CLI gives the one that works for this install."""

from __future__ import annotations

import json
from importlib import metadata
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
    run_cli: RunCli,
) -> None:
    result = run_cli(["run", "hi"], env={"OPENAI_API_KEY": None, "ANTHROPIC_API_KEY": None})

    assert result.returncode != 0
    [line] = [x for x in result.stderr.splitlines() if "no model is configured" in x]
    recorded = [d.read_text("direct_url.json") for d in metadata.distributions(name="agentcli")]
    origin = next((json.loads(text) for text in recorded if text), None)  # what pip wrote
    assert install_command(origin, "local").split(" install ", 1)[1] in line, line
    if origin is not None:  # installed from a checkout, a file or a URL: not from an index
        assert "install 'agentcli[local]'" not in line, line
    if origin and origin.get("dir_info", {}).get("editable"):
        assert f"install -e '{CHECKOUT}[local]'" in line, line
