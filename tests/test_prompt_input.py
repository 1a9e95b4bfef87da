"""Where a one-shot prompt comes from, and model names."""

from __future__ import annotations

import os

import pytest

from agentcli.assembly import resolve_settings
from agentcli.cli.prompt_input import build_prompt, read_stdin
from agentcli.errors import ConfigError, UsageError
from agentcli.providers.configured import parse_model as parse_with
from agentcli.providers.table import builtin_specs
from agentcli.settings import ModelSpec, ProviderConfig

PROVIDERS = {
    "openai": ProviderConfig("openai", "openai", None, "OPENAI_API_KEY"),
    "anthropic": ProviderConfig("anthropic", "anthropic", None, "ANTHROPIC_API_KEY"),
    "local": ProviderConfig("local", "local", None, "AGENTCLI_LOCAL_NO_KEY"),
    "work": ProviderConfig("work", "openai", None, "WORK_KEY", "small", {"big": "gpt-4.1"}),
}
assert {kind for kind, spec in builtin_specs().items() if spec.preset} <= set(PROVIDERS)


def parse_model(text: str) -> ModelSpec:
    return parse_with(text, PROVIDERS)


def test_argument_alone_stdin_alone_and_both():
    assert build_prompt("explain", None) == "explain"
    assert build_prompt(None, "from stdin\n") == "from stdin"
    assert build_prompt("-", "from stdin") == "from stdin"
    assert build_prompt("commit message", "diff --git a b\n") == (
        "commit message\n\n<stdin>\ndiff --git a b\n</stdin>"
    )


def test_no_prompt_is_a_usage_error():
    with pytest.raises(UsageError, match="no prompt"):
        build_prompt(None, None)
    with pytest.raises(UsageError, match="empty"):
        build_prompt("  ", None)


def test_read_stdin_from_a_pipe_and_an_empty_one():
    read_end, write_end = os.pipe()
    os.write(write_end, b"piped text")
    os.close(write_end)
    with os.fdopen(read_end, "rb") as stream:
        assert read_stdin(prompt_expected=False, stream=stream) == "piped text"
    read_end, write_end = os.pipe()
    os.close(write_end)
    with os.fdopen(read_end, "rb") as stream:
        assert read_stdin(prompt_expected=True, stream=stream) is None


def test_read_stdin_gives_up_on_a_silent_pipe(monkeypatch, capsys):
    monkeypatch.setattr("agentcli.cli.prompt_input.CONTEXT_WAIT_SECONDS", 0.1)
    read_end, write_end = os.pipe()  # the writer never writes nor closes
    try:
        with os.fdopen(read_end, "rb") as stream:
            assert read_stdin(prompt_expected=False, stream=stream) is None
        assert "stdin stayed silent" in capsys.readouterr().err
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("openai:gpt-4.1-mini", ModelSpec("openai", "gpt-4.1-mini")),
        ("openai:llama3.1:8b", ModelSpec("openai", "llama3.1:8b")),
        ("gpt-4o", ModelSpec("openai", "gpt-4o")),
        ("openai", ModelSpec("openai", "gpt-4.1-mini")),
        ("work", ModelSpec("work", "small")),
        ("anthropic", ModelSpec("anthropic", "claude-sonnet-4-5")),
        ("anthropic:claude-x", ModelSpec("anthropic", "claude-x")),
        ("work:big", ModelSpec("work", "gpt-4.1")),
        ("work:other", ModelSpec("work", "other")),
    ],
)
def test_model_names(text, spec):
    assert parse_model(text) == spec


def test_unknown_provider_and_empty_model_are_usage_errors():
    with pytest.raises(UsageError, match="unknown provider 'foo'"):
        parse_model("foo:bar")
    with pytest.raises(UsageError, match="names no model"):
        parse_model("openai:")


def settings(env: dict[str, str], **overrides):
    flags = dict(
        model=None,
        base_url=None,
        cwd=None,
        system=None,
        max_steps=20,
        timeout=None,
        output="text",
        yes=False,
        deny=False,
        debug=False,
    )
    flags.update(overrides)
    return resolve_settings(env=env, **flags)


def test_model_resolution_order():
    env = {"AGENTCLI_MODEL": "openai:from-env", "OPENAI_API_KEY": "k"}
    assert settings(env, model="openai:from-flag").model.name == "from-flag"
    assert settings(env).model.name == "from-env"
    assert settings({"OPENAI_API_KEY": "k"}).model == ModelSpec("openai", "gpt-4.1-mini")
    local = settings({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert local.base_url == "http://127.0.0.1:9/v1" and local.api_key is None


def test_configuration_errors(isolated_agentcli_home):
    (isolated_agentcli_home / "config.toml").write_text("[providers.local]\nauto = false\n")
    with pytest.raises(ConfigError, match="no model is configured; the three ways"):
        settings({})
    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set"):
        settings({}, model="openai:gpt-4o")
    with pytest.raises(UsageError, match="contradict"):
        settings({"OPENAI_API_KEY": "k"}, yes=True, deny=True)
    with pytest.raises(UsageError, match="--max-steps"):
        settings({"OPENAI_API_KEY": "k"}, max_steps=0)
    with pytest.raises(UsageError, match="not a directory"):
        settings({"OPENAI_API_KEY": "k"}, cwd="/nonexistent/dir")


def test_the_embedded_model_is_the_last_resort():
    from agentcli.providers.local import local_available

    if not local_available():
        pytest.skip("the embedded local model is not installed (agentcli[local])")
    assert settings({}).model.provider == "local"
    assert settings({"ANTHROPIC_API_KEY": "k"}).model.provider == "anthropic"
