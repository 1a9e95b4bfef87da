"""Where the configuration files are, and reading one into flat dotted keys with errors
that name the file, the line and what is wrong."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentcli.config.schema import OPEN_TABLES, check_type, did_you_mean, is_known
from agentcli.errors import ConfigError
from agentcli.paths import config_dir

PROJECT_DIR = ".agentcli"
FILE_NAME = "config.toml"


def user_config_path() -> Path:
    return config_dir() / FILE_NAME


def project_config_path(workspace: Path) -> Path:
    return workspace / PROJECT_DIR / FILE_NAME


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in data.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict):
            flat.update(flatten(value, key + "."))
        else:
            flat[key] = value
    return flat


def line_of(text: str, key: str) -> int | None:
    """Best effort: the line that sets `key` (its last part, under its table)."""
    *tables, leaf = key.split(".")
    section = ".".join(tables)
    current = ""
    pattern = re.compile(rf"^\s*(?:\"?{re.escape(leaf)}\"?)\s*=")
    for number, line in enumerate(text.splitlines(), start=1):
        header = re.match(r"^\s*\[+\s*([^\]]+?)\s*\]+", line)
        if header:
            current = header.group(1).replace('"', "")
            if current == key:  # `[[hooks.PreToolUse]]`: the table is the key
                return number
            continue
        if pattern.match(line) and (current == section or not section):
            return number
        rest = re.escape(key[len(current) + 1 :] if current else key)
        dotted = re.match(rf'^\s*"?{rest}"?\s*=', line)  # a quoted name may hold a dot
        if dotted and key.startswith(current):
            return number
    return None


def line_near(text: str, key: str) -> int | None:
    """The line that sets `key`, else the nearest table above it that has a line (a value
    inside an inline table or an array of tables)."""
    parts = key.split(".")
    for end in range(len(parts), 0, -1):
        where = line_of(text, ".".join(parts[:end]))
        if where is not None:
            return where
    return None


def config_text(path: Path) -> str | None:
    """A configuration file's text, None when there is none. One line (ConfigError) when it
    cannot be read: a FIFO or a directory put in its place is never waited on."""
    from agentcli.regular_files import read_text

    try:
        # A BOM some editors write is taken as front matter takes it: TOML has none.
        return read_text(path).removeprefix("\ufeff")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None


def read_config_file(path: Path) -> tuple[dict[str, Any], list[str]]:
    """The file's settings as flat keys, and warnings for keys agentcli does not know.
    Raises ConfigError for a syntax error or a value of the wrong type."""
    text = config_text(path)
    if text is None:
        return {}, []
    import tomllib  # only when a file exists: most runs have none

    try:
        data = tomllib.loads(text)
        flat = flatten(data)
    except tomllib.TOMLDecodeError as exc:
        reason = str(exc).replace(
            "(at end of document)", f"(at the end of the file, line {text.count(chr(10)) or 1})"
        )
        raise ConfigError(f"{path}: invalid TOML: {reason}; fix the file or remove it") from None
    except RecursionError:  # tomllib reads nested arrays and tables by recursion
        raise ConfigError(
            f"{path}: arrays or tables nested too deeply to read (no setting nests like "
            "that); fix the file or remove it"
        ) from None
    warnings = []
    for key, value in flat.items():
        problem = check_type(key, value)
        if problem:
            where = line_near(text, key)
            at = f", line {where}" if where else ""
            raise ConfigError(f"{path}{at}: {problem}")
        if not is_known(key) and not any(key.startswith(t + ".") for t in OPEN_TABLES):
            where = line_of(text, key)
            at = f" (line {where})" if where else ""
            warnings.append(f"{path}{at}: unknown setting {key!r} is ignored{did_you_mean(key)}")
    return flat, warnings
