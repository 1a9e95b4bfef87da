"""No private reach: agentcli uses libraries through their public interfaces and keeps each
class's underscore members to that class. Where a library has no public way, the need lives
in one small adapter module, named below with why, and a test of its own fails on the
library's next change (tests/test_adapters.py).

What counts, read from the syntax tree of every module of agentcli/:
- importing a module or name with a leading underscore from another package (or another
  agentcli module's private name, or a private module from outside its package);
- `something._name` where `something` is not `self` or `cls` of the class that defines
  `_name` (another object's, another module's, a library object's private member);
- `self._name` or `super()._name` that the class inherits from a library's class;
- a string naming another package's private module (`sys.modules["pkg._mod"]`).
Dunder names (`__name__`) are public, and so are the few underscore names the standard
library documents as public (below)."""

from __future__ import annotations

import ast
from pathlib import Path

import agentcli

PACKAGE = Path(agentcli.__file__).parent

# Documented public despite the underscore: os._exit (os docs), the _thread module
# (library docs, "Low-level threading API"), and namedtuple's methods and fields.
DOCUMENTED = {"_exit", "_replace", "_asdict", "_fields", "_make"}
DOCUMENTED_MODULES = {"_thread"}

# The adapter modules, each the one place a library's private part is used, and why.
ADAPTERS: dict[str, tuple[set[str], str]] = {
    "adapters/httpx_cli.py": (
        {"httpx._main"},
        "httpx imports its own CLI (click, rich, pygments: tens of ms) when click is "
        "installed; it has no switch for that, only its ImportError fallback",
    ),
    "adapters/httpx_backend.py": (
        {"_pool"},
        "httpx's transport takes no network backend; its connection pool (httpcore's "
        "public AsyncConnectionPool) does: fetch_url checks every address it connects to",
    ),
    "adapters/typer_errors.py": (
        {"typer._click"},
        "typer vendors click and exports none of its usage errors publicly",
    ),
    "mcp/oauth.py": (
        {
            "_initialize",
            "_auth_flow",
            "_refresh_token",
            "_handle_refresh_response",
            "_add_auth_header",
        },
        "the SDK's OAuthClientProvider has no hook for a stored token's expiry or for a "
        "refresh on a 401 in the middle of a session",
    ),
    "adapters/bash_grammar.py": (
        {"tree_sitter_bash._binding"},
        "tree-sitter-bash's package __init__ imports importlib.resources (about 6 ms of "
        "every policy decision) only for its highlighting query; the grammar is loaded "
        "from its compiled module, falling back to the plain import",
    ),
    "sandbox/launcher.py": (
        {"_signal"},
        "runs as its own program under -I -S before every command; `signal` imports enum, "
        "about 5 ms a command",
    ),
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_module(dotted: str) -> bool:
    return any(_private(part) for part in dotted.split(".")) and dotted not in DOCUMENTED_MODULES


class _ClassInfo:
    def __init__(self, node: ast.ClassDef, ours: set[str]) -> None:
        """`ours`: the names in the module that are agentcli's (its own classes, and what
        it imports from agentcli): a class's members may come from those bases."""
        self.name = node.name
        self.defines: set[str] = set()
        self.external_base = False
        for base in node.bases:
            root = base
            while isinstance(root, ast.Attribute | ast.Subscript):
                root = root.value
            if isinstance(root, ast.Name) and root.id in ours:
                continue
            if not _is_protocolish(base):
                self.external_base = True
        for item in ast.walk(node):
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.defines.add(item.name)
            elif isinstance(item, ast.Attribute) and isinstance(item.ctx, ast.Store):
                self.defines.add(item.attr)
            elif isinstance(item, ast.Name) and isinstance(item.ctx, ast.Store):
                self.defines.add(item.id)
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                self.defines.add(item.target.id)


def _is_protocolish(base: ast.expr) -> bool:
    """Bases that bring no private members of their own."""
    text = ast.unparse(base)
    return text in {
        "object",
        "Protocol",
        "Exception",
        "ValueError",
        "Enum",
        "IntEnum",
        "str",
        "int",
        "dict",
        "list",
        "tuple",
        "Generic",
        "NamedTuple",
        "TypedDict",
        "RuntimeError",
        "TypeError",
        "KeyError",
        "OSError",
        "AttributeError",
        "LookupError",
        "BaseException",
    } or text.startswith(("Generic[", "Protocol["))


def reaches(path: Path) -> list[tuple[int, str]]:
    """The private reaches of one module: (line, what)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    relative = path.relative_to(PACKAGE)
    own_package = ".".join(("agentcli", *relative.parent.parts))
    local_classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    ours = set(local_classes)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agentcli"):
            ours.update(alias.asname or alias.name for alias in node.names)
    found: list[tuple[int, str]] = []

    def check_import(node: ast.AST, module: str, names: list[str]) -> None:
        ours = module == "agentcli" or module.startswith("agentcli.")
        if _private_module(module):
            inside = ours and module.rpartition(".")[0] == own_package
            if not inside:
                found.append((node.lineno, f"imports the private module {module}"))
        for name in names:
            if _private(name):
                found.append((node.lineno, f"imports the private name {name} from {module}"))

    def visit(node: ast.AST, classes: list[_ClassInfo]) -> None:
        if isinstance(node, ast.ClassDef):
            classes = [*classes, _ClassInfo(node, ours)]
        if isinstance(node, ast.Import):
            for alias in node.names:
                check_import(node, alias.name, [])
        elif isinstance(node, ast.ImportFrom) and not node.level:
            check_import(node, node.module or "", [a.name for a in node.names])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            first = text.split(".")[0]
            dotted = "." in text and text.replace(".", "").replace("_", "").isalnum()
            foreign = first != "agentcli" and not _private(first)
            if dotted and foreign and _private_module(text):
                found.append((node.lineno, f"names the private module {text}"))
        elif (
            isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in DOCUMENTED
        ):
            problem = _attribute_problem(node, classes, local_classes)
            if problem:
                found.append((node.lineno, problem))
        for child in ast.iter_child_nodes(node):
            visit(child, classes)

    visit(tree, [])
    return found


def _attribute_problem(
    node: ast.Attribute, classes: list[_ClassInfo], local_classes: set[str]
) -> str | None:
    base, name = node.value, node.attr
    owner = classes[-1] if classes else None
    if isinstance(base, ast.Name) and base.id in ("self", "cls"):
        if owner is None or name in owner.defines or not owner.external_base:
            return None
        return f"self.{name}: a private member its library base class defines"
    if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super":
        if owner is not None and not owner.external_base:
            return None
        return f"super().{name}: a private member of a library's class"
    if isinstance(base, ast.Name) and base.id in local_classes:
        return None  # a member of a class of this module, named through it (a dispatch table)
    return f"{ast.unparse(node)}: another object's private member"


def all_reaches() -> dict[str, list[tuple[int, str]]]:
    return {
        str(path.relative_to(PACKAGE)): hits
        for path in sorted(PACKAGE.rglob("*.py"))
        if (hits := reaches(path))
    }


def _allowed(module: str, what: str) -> bool:
    names, _ = ADAPTERS.get(module, (set(), ""))
    return any(name in what for name in names)


def test_no_module_reaches_into_private_parts() -> None:
    offenders = [
        f"{module}:{line}: {what}"
        for module, hits in all_reaches().items()
        for line, what in hits
        if not _allowed(module, what)
    ]
    assert offenders == []


def test_every_adapter_entry_is_still_needed() -> None:
    """An allowance nobody uses any more goes: the list says only what is true."""
    found = all_reaches()
    for module, (names, _) in ADAPTERS.items():
        used = {name for name in names if any(name in what for _, what in found.get(module, []))}
        assert used == names, f"{module}: {sorted(names - used)} no longer used"


def test_the_check_finds_each_kind_of_reach(tmp_path: Path) -> None:
    """The check must be able to fail: one module with every kind of reach."""
    planted = PACKAGE / "_planted_reach_check.py"
    planted.write_text(
        "import sys\n"
        "from httpx._config import DEFAULT_TIMEOUT_CONFIG\n"
        "from agentcli.mcp.server import _leaf\n"
        "from mcp.client.auth import OAuthClientProvider\n"
        "sys.modules.setdefault('httpx._main', None)\n"
        "class Mine(OAuthClientProvider):\n"
        "    def go(self, other):\n"
        "        self._refresh_token()\n"
        "        super()._initialize()\n"
        "        return other._session\n",
        encoding="utf-8",
    )
    try:
        hits = [what for _, what in reaches(planted)]
    finally:
        planted.unlink()
    assert any("httpx._config" in h for h in hits)
    assert any("_leaf" in h for h in hits)
    assert any("httpx._main" in h for h in hits)
    assert any("self._refresh_token" in h for h in hits)
    assert any("super()._initialize" in h for h in hits)
    assert any("other._session" in h for h in hits)
