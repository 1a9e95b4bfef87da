"""Resolving the layers of configuration into one view that knows where each value came
from: defaults < user file < project file < environment < flags."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli.config import trust
from agentcli.config.files import project_config_path, read_config_file, user_config_path
from agentcli.config.schema import SETTINGS, is_dangerous
from agentcli.records import dataclass, field

# Environment variables that set configuration keys (API keys are not settings: they are
# read from the variable a provider names, when a request is made).
ENV_KEYS = {
    "AGENTCLI_MODEL": "model",
    "OPENAI_BASE_URL": "providers.openai.base_url",
    "ANTHROPIC_BASE_URL": "providers.anthropic.base_url",
}
RULE_KEYS = ("policy.allow", "policy.ask", "policy.deny")


@dataclass(slots=True)
class Layer:
    name: str  # default | user | project | env | flag
    values: dict[str, Any]
    labels: dict[str, str] = field(default_factory=dict)  # key -> where it came from
    path: Path | None = None

    def label(self, key: str) -> str:
        return self.labels.get(key) or (str(self.path) if self.path else self.name)


@dataclass(slots=True)
class Config:
    layers: list[Layer]  # lowest precedence first
    workspace: Path
    trusted: bool
    ignored: list[str] = field(default_factory=list)  # untrusted project keys not applied
    warnings: list[str] = field(default_factory=list)

    def _winner(self, key: str) -> Layer | None:
        for layer in reversed(self.layers):
            if key in layer.values:
                return layer
        return None

    def get(self, key: str, default: Any = None) -> Any:
        layer = self._winner(key)
        if layer is None:
            setting = SETTINGS.get(key)
            return setting.default if setting is not None else default
        return layer.values[key]

    def source(self, key: str) -> str:
        layer = self._winner(key)
        return layer.label(key) if layer is not None else "default"

    def rules(self, key: str) -> list[tuple[str, str]]:
        """Rules add up across layers: (rule, where it came from)."""
        return [
            (rule, layer.label(key)) for layer in self.layers for rule in layer.values.get(key, [])
        ]

    def table(self, prefix: str) -> dict[str, Any]:
        """A free-form table (e.g. `providers`) merged across layers, as nested dicts."""
        merged: dict[str, Any] = {}
        for layer in self.layers:
            for key, value in layer.values.items():
                if not key.startswith(prefix + "."):
                    continue
                node = merged
                *parents, leaf = key[len(prefix) + 1 :].split(".")
                for part in parents:
                    node = node.setdefault(part, {})
                node[leaf] = value
        return merged

    def effective(self) -> list[tuple[str, Any, str]]:
        """Every setting with a value: (key, value, where it came from), sorted by key."""
        keys = set(SETTINGS) | {k for layer in self.layers for k in layer.values}
        rows = []
        for key in sorted(keys):
            if key in RULE_KEYS:
                rules = self.rules(key)
                rows.append(
                    (
                        key,
                        [r for r, _ in rules],
                        ", ".join(sorted({s for _, s in rules})) or "default",
                    )
                )
                continue
            value = self.get(key)
            if value is not None:
                rows.append((key, value, self.source(key)))
        return rows


def load_config(
    workspace: Path,
    *,
    flags: Mapping[str, Any] | None = None,
    flag_labels: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    env = os.environ if env is None else env
    warnings: list[str] = []
    user_path = user_config_path()
    user_values, user_warnings = read_config_file(user_path)
    project_path = project_config_path(workspace)
    project_values, project_warnings = read_config_file(project_path)
    warnings += user_warnings + project_warnings

    trusted = trust.is_trusted(workspace)
    ignored: list[str] = []
    if project_values and not trusted:
        ignored = sorted(k for k in project_values if is_dangerous(k))
        project_values = {k: v for k, v in project_values.items() if k not in ignored}

    env_values = {key: env[var] for var, key in ENV_KEYS.items() if env.get(var)}
    env_labels = {key: f"env {var}" for var, key in ENV_KEYS.items() if env.get(var)}
    flag_values = {k: v for k, v in (flags or {}).items() if v is not None}
    layers = [
        Layer("default", {}),
        Layer("user", user_values, path=user_path),
        Layer("project", project_values, path=project_path),
        Layer("env", env_values, labels=env_labels),
        Layer("flag", flag_values, labels=dict(flag_labels or {})),
    ]
    return Config(layers, workspace, trusted, ignored, warnings)
