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


# --- no import circle at all ------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module → the agentcli modules it imports, counting imports inside functions and
    under TYPE_CHECKING (deferred, not absent), relative imports, and the package that
    importing a submodule first imports (`a.b.c` imports `a.b`)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                targets.update(f"{base}.{alias.name}" for alias in node.names)
                targets.add(base)
        deps = set()
        for target in targets:
            found = known(target) if target.startswith("agentcli") else None
            while found and found != name:
                if not name.startswith(found + "."):  # a package's own __init__ is not a dep
                    deps.add(found)
                found = found.rpartition(".")[0] or None
                found = found if found in modules else None
        graph[name] = deps
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in graph[node]:
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_module_of_agentcli_imports_itself_through_others() -> None:
    assert circles(import_graph()) == []


def test_the_graph_sees_deferred_imports() -> None:
    """The check must be able to fail: a circle made of function-local and TYPE_CHECKING
    imports is one."""
    graph = import_graph()
    assert "agentcli.policy.setup" in graph["agentcli.assembly.settings"]  # in resolve_settings
    assert "agentcli.agent.session" in graph["agentcli.ui.host"]  # under TYPE_CHECKING
    assert "agentcli.policy" in graph["agentcli.risk"]  # the package of policy.shell_parse
    made = {name: set(deps) for name, deps in graph.items()}
    made["agentcli.settings"].add("agentcli.assembly.settings")  # as a deferred import would
    assert circles(made) != []


# --- one composition root ---------------------------------------------------------------

# What the agent is handed rather than builds: the composition root (agentcli.assembly)
# puts these together, so agent/ never imports them — not even inside a function.
BUILT_ABOVE_THE_AGENT = (
    "agentcli.assembly",
    "agentcli.mcp",
    "agentcli.plugins",
    "agentcli.providers.factory",
    "agentcli.sandbox.confine",
    "agentcli.policy.setup",
)


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_the_agent_is_handed_its_parts() -> None:
    graph = import_graph()
    offenders = sorted(
        f"{name} imports {dep}"
        for name, deps in graph.items()
        if _within(name, ("agentcli.agent",))
        for dep in deps
        if _within(dep, BUILT_ABOVE_THE_AGENT)
    )
    assert offenders == []


def test_the_agent_reaches_none_of_them_through_others() -> None:
    """Nor through a module it imports: what agent/ loads, all the way down, holds none."""
    graph = import_graph()
    seen: set[str] = set()
    todo = [name for name in graph if _within(name, ("agentcli.agent",))]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(graph[name])
    assert sorted(m for m in seen if _within(m, BUILT_ABOVE_THE_AGENT)) == []


# Every session is opened by one function; nothing else constructs an Agent.
def test_only_the_composition_root_makes_an_agent() -> None:
    makers = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "Agent"
    )
    assert makers == ["assembly/session.py"]


# Front ends ask the composition root; nothing it assembles imports it back.
FRONT_ENDS = (
    "agentcli.__main__",
    "agentcli.cli",
    "agentcli.ui",
    "agentcli.agui.server",
    "agentcli.mcp_serve",
)


def test_only_front_ends_ask_the_composition_root() -> None:
    graph = import_graph()
    askers = sorted(
        name
        for name, deps in graph.items()
        if any(_within(dep, ("agentcli.assembly",)) for dep in deps)
        and not _within(name, ("agentcli.assembly", *FRONT_ENDS))
    )
    assert askers == []
