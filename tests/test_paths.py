"""agentcli.paths: AGENTCLI_HOME first, else platformdirs' directories (XDG on Linux)."""

from __future__ import annotations

import sys

import pytest

from agentcli import paths

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="the XDG path is Linux's")


def test_agentcli_home_holds_everything(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", "/elsewhere")
    assert paths.config_dir() == tmp_path
    assert paths.data_dir() == tmp_path / "data"
    assert paths.cache_dir() == tmp_path / "cache"


@linux_only
def test_without_agentcli_home_the_xdg_variables_decide(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("AGENTCLI_HOME", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "conf"))
    monkeypatch.setenv("XDG_DATA_HOME", "not/absolute")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert paths.config_dir() == tmp_path / "conf" / "agentcli"
    assert paths.data_dir() == tmp_path / "home" / ".local" / "share" / "agentcli"
    assert paths.cache_dir() == tmp_path / "home" / ".cache" / "agentcli"
