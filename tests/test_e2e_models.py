"""`agentcli models`: what the configured providers offer, asked of real (scripted) servers
over HTTP; a server that does not answer is one clear line."""

from __future__ import annotations

import json
import socket

from agentcli.providers.local.models import MODELS, local_available
from tests.conftest import RunCli, assert_one_error, error_lines
from tests.scripted_anthropic import ScriptedAnthropic
from tests.scripted_server import Reply, ScriptedServer


def local_lines() -> list[str]:
    """What the local provider lists on this machine (nothing without agentcli[local])."""
    return [f"local:{name}" for name in MODELS if local_available(name)]


def listed(stdout: str) -> list[str]:
    return [line.split()[0] for line in stdout.splitlines() if line.strip()]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_models_of_one_server(run_cli: RunCli, server: ScriptedServer) -> None:
    server.models = ["llama3.1:8b", "qwen2.5-coder"]
    result = run_cli(
        ["models", "--base-url", server.base_url], env={"OPENAI_API_KEY": "sk-listing"}
    )

    assert result.returncode == 0, result.stderr
    assert listed(result.stdout) == ["openai:llama3.1:8b", "openai:qwen2.5-coder"]
    assert result.stderr == ""
    [request] = server.listings
    assert request.method == "GET" and request.path == "/v1/models"
    assert request.headers["authorization"] == "Bearer sk-listing"


def test_models_as_json(run_cli: RunCli, server: ScriptedServer) -> None:
    server.models = ["alpha"]
    result = run_cli(["models", "--json"], server=server)  # OPENAI_BASE_URL

    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    openai = next(p for p in document["providers"] if p["provider"] == "openai")
    assert openai["baseUrl"] == server.base_url
    assert openai["error"] is None
    assert openai["models"] == [{"model": "openai:alpha", "id": "alpha", "detail": ""}]


def test_every_configured_provider_is_asked(run_cli: RunCli, server: ScriptedServer) -> None:
    many = [f"claude-{n:04d}" for n in range(1003)]  # more than one page of 1000
    with ScriptedAnthropic() as anthropic:
        anthropic.models = many
        env = {"ANTHROPIC_API_KEY": "sk-ant-listing", "ANTHROPIC_BASE_URL": anthropic.base_url}
        result = run_cli(["models"], server=server, env=env)

    assert result.returncode == 0, result.stderr
    names = listed(result.stdout)
    assert names == ["openai:scripted-model", *(f"anthropic:{m}" for m in many), *local_lines()]
    assert "Claude 0001" in result.stdout  # the display name
    assert len(anthropic.listings) == 2
    first, second = anthropic.listings
    assert first.headers["x-api-key"] == "sk-ant-listing"
    assert first.headers["anthropic-version"]
    assert "after_id=claude-0999" in second.path


def test_a_server_that_does_not_answer_is_one_line(run_cli: RunCli) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    result = run_cli(["models", "--base-url", url])

    assert result.returncode == 1
    assert_one_error(result, "cannot connect", url, "--base-url")
    assert result.stdout == ""


def test_the_others_are_listed_when_one_fails(run_cli: RunCli, server: ScriptedServer) -> None:
    server.models_reply = Reply.error(503, "the model is still loading")
    with ScriptedAnthropic() as anthropic:
        env = {"ANTHROPIC_API_KEY": "sk-ant-x", "ANTHROPIC_BASE_URL": anthropic.base_url}
        result = run_cli(["models"], server=server, env=env)

    assert result.returncode == 1
    assert_one_error(result, "HTTP 503", "the model is still loading")
    assert listed(result.stdout) == ["anthropic:claude-scripted", *local_lines()]
    assert len(server.listings) == 1  # a listing is not retried


def test_nothing_set_up(run_cli: RunCli) -> None:
    result = run_cli(["models"])
    if local_lines():
        assert result.returncode == 0 and listed(result.stdout) == local_lines()
        return
    assert result.returncode == 2
    assert_one_error(result, "no provider", "--base-url")


def test_a_server_that_lists_nothing_says_so(run_cli: RunCli, server: ScriptedServer) -> None:
    server.models = []
    result = run_cli(["models", "--base-url", server.base_url])

    assert result.returncode == 0
    assert result.stdout == ""
    assert error_lines(result.stderr) == []
    assert "lists no models" in result.stderr


def test_a_base_url_without_its_v1_is_named(run_cli: RunCli, server: ScriptedServer) -> None:
    result = run_cli(["models", "--base-url", server.url])  # no /v1: GET /models is a 404

    assert result.returncode == 1
    assert_one_error(result, f"{server.url} has no model listing", "HTTP 404", "base URL")
