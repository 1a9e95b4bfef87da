"""`agentcli config set`: change one key in a configuration file, keeping its comments and
layout (tomlkit), after checking the key and the value."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from agentcli.config.files import config_text
from agentcli.config.schema import check_type, did_you_mean, is_known
from agentcli.errors import ConfigError, UsageError


def parse_value(text: str) -> Any:
    """A TOML value (`true`, `5`, `["a", "b"]`, `"x"`); anything else is a plain string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _parsed(path: Path, text: str) -> Any:
    """The file as a tomlkit document, or one line saying why it cannot be changed."""
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text)
    except (ParseError, RecursionError) as error:
        why = str(error) if isinstance(error, ParseError) else "nested too deeply to read"
        raise ConfigError(f"{path}: invalid TOML ({why}); fix the file or remove it") from None


def _open_table(path: Path, key: str, *, super_tables: bool = False) -> tuple[Any, Any, str]:
    """The file as a tomlkit document (comments and layout kept), the table that holds
    `key` (created if missing; `super_tables`: without headers of their own, so a new
    table reads `[mcp.servers.NAME]`), and the key's last part."""
    import tomlkit

    document = _parsed(path, config_text(path) or "")
    *tables, leaf = key.split(".")
    node: Any = document
    for part in tables:
        if part not in node:
            node[part] = tomlkit.table(is_super_table=super_tables)
        node = node[part]
    return document, node, leaf


def set_value(path: Path, key: str, text: str) -> Any:
    import tomlkit

    if not is_known(key):
        raise UsageError(
            f"unknown setting {key!r}{did_you_mean(key)}; `agentcli config show` lists them"
        )
    value = parse_value(text)
    problem = check_type(key, value)
    if problem:
        raise UsageError(problem)
    document, node, leaf = _open_table(path, key)
    node[leaf] = value
    _write(path, tomlkit.dumps(document))
    return value


def append_values(path: Path, key: str, values: list[str]) -> None:
    """Adds strings to a list setting (rules), keeping what is there and the comments."""
    import tomlkit

    document, node, leaf = _open_table(path, key)
    current = node.get(leaf)
    if current is None:
        current = tomlkit.array()
        node[leaf] = current
    for value in values:
        if value not in current:
            current.append(value)
    _write(path, tomlkit.dumps(document))


def set_table(path: Path, key: str, values: dict[str, Any]) -> None:
    """Writes a whole table (`mcp.servers.NAME`), replacing one of that name; nested
    dicts become inline tables."""
    import tomlkit

    document, node, leaf = _open_table(path, key, super_tables=True)
    table = tomlkit.table()
    for name, value in values.items():
        if isinstance(value, dict):
            inline = tomlkit.inline_table()
            inline.update(value)
            value = inline
        table[name] = value
    node[leaf] = table
    _write(path, tomlkit.dumps(document))


def remove_key(path: Path, key: str) -> bool:
    """Removes a key or table; False when the file does not have it."""
    import tomlkit

    if not path.exists():
        return False
    document = _parsed(path, config_text(path) or "")
    *tables, leaf = key.split(".")
    node: Any = document
    for part in tables:
        if part not in node:
            return False
        node = node[part]
    if leaf not in node:
        return False
    del node[leaf]
    _write(path, tomlkit.dumps(document))
    return True


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)
