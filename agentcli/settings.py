"""The settings of one run, resolved from flags and environment into one object.
(Configuration files join this resolution in a later version; flags win over everything.)"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentcli.errors import ConfigError, UsageError

OutputFormat = Literal["text", "json", "jsonl"]
KNOWN_PROVIDERS = ("openai",)
DEFAULT_OPENAI_MODEL = "gpt-4.1-mini"
OFFICIAL_OPENAI_URL = "https://api.openai.com/v1"


@dataclass(frozen=True, slots=True)
class ModelSpec:
    provider: str
    name: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.name}"


@dataclass(frozen=True, slots=True)
class RunSettings:
    model: ModelSpec
    base_url: str | None
    api_key: str | None
    api_key_env: str
    workspace: Path
    system: str | None = None
    max_steps: int = 20
    timeout: float | None = None
    output: OutputFormat = "text"
    yes: bool = False
    deny: bool = False
    debug: bool = False


def parse_model(text: str) -> ModelSpec:
    """`PROVIDER:MODEL`. The model part may hold colons (`openai:llama3.1:8b`); a bare name
    is an OpenAI-compatible model."""
    provider, sep, name = text.partition(":")
    if not sep:
        if text in KNOWN_PROVIDERS:
            return ModelSpec(text, DEFAULT_OPENAI_MODEL)
        return ModelSpec("openai", text)
    if provider not in KNOWN_PROVIDERS:
        known = ", ".join(KNOWN_PROVIDERS)
        raise UsageError(
            f"unknown provider {provider!r} in --model {text!r}; use PROVIDER:MODEL with "
            f"PROVIDER one of: {known} (e.g. openai:{DEFAULT_OPENAI_MODEL})"
        )
    if not name:
        raise UsageError(f"--model {text!r} names no model; use PROVIDER:MODEL")
    return ModelSpec(provider, name)


def resolve_settings(
    *,
    model: str | None,
    base_url: str | None,
    cwd: str | None,
    system: str | None,
    max_steps: int,
    timeout: float | None,
    output: str,
    yes: bool,
    deny: bool,
    debug: bool,
    env: Mapping[str, str] = os.environ,
) -> RunSettings:
    if yes and deny:
        raise UsageError("--yes and --deny contradict each other; pass one of them")
    if max_steps < 1:
        raise UsageError(f"--max-steps must be at least 1, not {max_steps}")
    if timeout is not None and timeout <= 0:
        raise UsageError(f"--timeout must be a positive number of seconds, not {timeout:g}")
    if output not in ("text", "json", "jsonl"):
        raise UsageError(f"--output must be text, json or jsonl, not {output!r}")
    workspace = Path(cwd or os.getcwd()).expanduser()
    if not workspace.is_dir():
        raise UsageError(f"--cwd {str(workspace)!r} is not a directory")

    base_url = base_url or env.get("OPENAI_BASE_URL") or None
    key_env = "OPENAI_API_KEY"
    api_key = env.get(key_env) or None
    model_text = model or env.get("AGENTCLI_MODEL")
    if model_text:
        spec = parse_model(model_text)
    elif api_key or base_url:
        spec = ModelSpec("openai", DEFAULT_OPENAI_MODEL)
    else:
        raise ConfigError(
            "no model is configured: set OPENAI_API_KEY, or point --base-url (OPENAI_BASE_URL) "
            "at an OpenAI-compatible server such as Ollama, or pass --model PROVIDER:MODEL"
        )
    if (
        spec.provider == "openai"
        and not api_key
        and (base_url or OFFICIAL_OPENAI_URL).rstrip("/") == OFFICIAL_OPENAI_URL
    ):
        raise ConfigError(
            f"{key_env} is not set: export it, or point --base-url (OPENAI_BASE_URL) at a "
            "server that needs no key"
        )
    return RunSettings(
        model=spec,
        base_url=base_url,
        api_key=api_key,
        api_key_env=key_env,
        workspace=workspace.resolve(),
        system=system,
        max_steps=max_steps,
        timeout=timeout,
        output=output,  # type: ignore[arg-type]
        yes=yes,
        deny=deny,
        debug=debug,
    )
