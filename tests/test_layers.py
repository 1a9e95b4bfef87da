"""Which package may import which: the policy decides, the front end (CLI, REPL) asks the
person, so the policy never builds or imports the terminal's approver."""

from __future__ import annotations

import ast
from pathlib import Path

import agentcli

PACKAGE = Path(agentcli.__file__).parent


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_the_policy_does_not_import_the_user_interface() -> None:
    offenders = {
        f"{path.relative_to(PACKAGE)}: {module}"
        for path in sorted((PACKAGE / "policy").rglob("*.py"))
        for module in imported_modules(path)
        if module == "agentcli.ui" or module.startswith("agentcli.ui.")
    }
    assert not offenders, offenders
