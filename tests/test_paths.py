"""agentcli.paths: AGENTCLI_HOME first; on Linux the XDG directories worked out without
platformdirs, which must agree with platformdirs for every way the variables can be set."""

from __future__ import annotations

import sys
from pathlib import Path

import platformdirs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli import paths

VARIABLES = ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "HOME"]
VALUES = st.one_of(st.none(), st.sampled_from(["", " ", "relative/dir", "/abs/dir", "/x/y/"]))

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="the XDG path is Linux's")


@linux_only
@settings(max_examples=150, deadline=None)
@given(values=st.fixed_dictionaries({name: VALUES for name in VARIABLES}))
def test_the_xdg_directories_agree_with_platformdirs(values) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("AGENTCLI_HOME", raising=False)
        for name, value in values.items():
            if value is None:
                patch.delenv(name, raising=False)
            else:
                patch.setenv(name, value)
        for kind in ("user_config_dir", "user_data_dir", "user_cache_dir"):
            expected = getattr(platformdirs, kind)("agentcli")
            assert paths.platform_dir(kind) == Path(expected)


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
