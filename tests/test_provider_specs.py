"""Provider types are one table of specs: the built-ins are registered through the same
`register_providers(register)` hook as a plug-in's, each is made by its own module, and no
other code switches on a provider type's name."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import agentcli
from agentcli.config import load_config
from agentcli.providers.builtin import register_providers
from agentcli.providers.factory import make_provider
from agentcli.providers.spec import ProviderSpec
from agentcli.providers.table import ProviderRegistrar, builtin_specs
from agentcli.settings import ModelSpec, ProviderConfig, RunSettings

PACKAGE = Path(agentcli.__file__).parent
BUILTIN_TYPES = {"openai", "anthropic", "local", "agui"}


def test_the_builtins_register_through_the_plug_in_hook() -> None:
    registrar = ProviderRegistrar("somewhere 1.0")
    register_providers(registrar)
    assert set(registrar.specs) == BUILTIN_TYPES
    assert {spec.origin for spec in registrar.specs.values()} == {"somewhere 1.0"}
    table = builtin_specs()
    assert {kind for kind, spec in table.items() if spec.preset} == {"openai", "anthropic", "local"}
    assert not table["agui"].configurable  # reached by --agent only
    assert table["openai"].api_key_env == "OPENAI_API_KEY"


def test_the_short_form_and_a_whole_spec_register_alike() -> None:
    registrar = ProviderRegistrar("plug 0.1")
    registrar("echo", lambda settings: None, default_model="parrot")
    registrar(ProviderSpec("mirror", lambda settings: None, default_model=lambda: "glass"))
    registrar("echo", lambda settings: "second")  # the first registration of a type wins
    assert registrar.specs["echo"].model() == "parrot"
    assert registrar.specs["mirror"].model() == "glass"
    assert registrar.specs["mirror"].origin == "plug 0.1"
    with pytest.raises(TypeError, match="needs a factory"):
        registrar("lonely")


@pytest.mark.parametrize(
    ("kind", "module", "cls"),
    [
        ("openai", "agentcli.providers.openai", "OpenAIProvider"),
        ("anthropic", "agentcli.providers.anthropic", "AnthropicProvider"),
        ("agui", "agentcli.agui.client", "AguiProvider"),
    ],
)
def test_each_spec_makes_its_modules_provider(
    kind: str, module: str, cls: str, tmp_path: Path
) -> None:
    provider = ProviderConfig("mine", kind, "http://127.0.0.1:9/v1", "MINE_KEY")
    settings = RunSettings(
        model=ModelSpec("mine", "m"),
        provider=provider,
        api_key="k",
        workspace=tmp_path,
        config=load_config(tmp_path),
    )
    made = make_provider(settings)
    assert type(made).__module__ == module and type(made).__name__ == cls


def test_reading_the_table_imports_no_provider_module(tmp_path: Path) -> None:
    probe = (
        "import sys; from pathlib import Path; from agentcli.config import load_config; "
        "from agentcli.providers.configured import providers_of; "
        "print(sorted(providers_of(load_config(Path(sys.argv[1])))), "
        "[m for m in ('agentcli.providers.openai', 'agentcli.providers.anthropic', "
        "'agentcli.agui.client', 'agentcli.providers.local', 'asyncio') if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['anthropic', 'local', 'openai'] []"


def _switches_on_a_type(node: ast.AST) -> bool:
    """`x.type == "openai"`, `kind != "local"` and the like."""
    if not isinstance(node, ast.Compare):
        return False
    sides = [node.left, *node.comparators]
    named = any(
        (isinstance(s, ast.Attribute) and s.attr == "type")
        or (isinstance(s, ast.Name) and s.id == "kind")
        for s in sides
    )
    return named and any(isinstance(s, ast.Constant) and s.value in BUILTIN_TYPES for s in sides)


def test_no_code_outside_the_specs_switches_on_a_provider_type() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if _switches_on_a_type(node)
    ]
    assert offenders == []
