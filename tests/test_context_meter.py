"""The context meter's parts: which window is known for a model (and saying so when none
is), and the toolbar fitted to the terminal's width."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.assembly import resolve_settings
from agentcli.ui.context_meter import known_window
from agentcli.ui.toolbar import fit


def settings_for(workspace: Path, model: str):
    return resolve_settings(
        model=model,
        base_url=None,
        cwd=str(workspace),
        system=None,
        max_steps=None,
        timeout=None,
        output="text",
        yes=False,
        deny=False,
        debug=False,
        env={"OPENAI_API_KEY": "x", "ANTHROPIC_API_KEY": "x"},
    )


@pytest.fixture
def ws(tmp_path: Path, isolated_agentcli_home: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def configure(home: Path, text: str) -> None:
    (home / "config.toml").write_text(text, encoding="utf-8")


def test_a_model_nobody_knows_has_no_window(ws: Path) -> None:
    window = known_window(settings_for(ws, "openai:my-finetune"))
    assert window.tokens is None
    assert "set context.window" in window.source


@pytest.mark.parametrize(
    ("model", "tokens"),
    [
        ("anthropic:claude-sonnet-4-5", 200_000),
        ("openai:gpt-4o-mini", 128_000),
        ("openai:gpt-4.1-mini", 1_047_576),
        ("openai:openai/gpt-4o", 128_000),
    ],
)
def test_well_known_models(ws: Path, model: str, tokens: int) -> None:
    assert known_window(settings_for(ws, model)).tokens == tokens


def test_the_configuration_wins(ws: Path, isolated_agentcli_home: Path) -> None:
    configure(isolated_agentcli_home, "[context]\nwindow = 32000\n")
    assert known_window(settings_for(ws, "anthropic:claude-x")).tokens == 32_000
    configure(
        isolated_agentcli_home,
        '[context]\nwindow = 32000\n[context.windows]\n"openai:mine" = 8192\n',
    )
    window = known_window(settings_for(ws, "openai:mine"))
    assert (window.tokens, window.source) == (8192, 'context.windows."openai:mine"')


def test_fit_leaves_out_the_least_needed_segments_first() -> None:
    segments = [("model", 5), ("/a/long/workspace/path", 1), ("ctx 5%", 4), ("/help", 3)]
    assert fit(segments, 200) == " model · /a/long/workspace/path · ctx 5% · /help"
    assert fit(segments, 30) == " model · ctx 5% · /help"
    assert fit(segments, 17) == " model · ctx 5%"
    assert fit([("", 9), ("only", 1)], 3) == " only"  # one is always kept
