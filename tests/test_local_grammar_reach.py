"""The local model writes its calls under a grammar, and fills whatever the grammar offers:
so the grammar offers the optional arguments that widen a call's reach (`sandbox`, its
`justification`, `background`) only where the user's request asks for them in words, and
then only the profile the request names. Checked over the schemas and the grammar
llama.cpp makes of them, for every built-in tool that has such an argument."""

from __future__ import annotations

import importlib.util
import json

import pytest

from agentcli.assembly import builtin_tools
from agentcli.providers.local import grammar

TOOLS = [
    {"name": t.name, "description": t.description, "parameters": t.parameters}
    for t in builtin_tools()
]
WIDENING = set(grammar.WIDENING)
WIDE = [t for t in TOOLS if WIDENING & set(t["parameters"].get("properties", {}))]
UNASKED = ["run the tests", "list the files with ls", "fetch the page and count the words", None]


def test_the_tools_that_can_widen_are_found() -> None:
    assert {t["name"] for t in WIDE} >= {"run_shell", "run_python"}


def _properties(schema: dict) -> set[str]:
    return set(schema.get("properties", {}))


@pytest.mark.parametrize("request_text", UNASKED)
@pytest.mark.parametrize("tool", WIDE, ids=lambda t: t["name"])
def test_unasked_the_schemas_offer_no_widening_argument(tool: dict, request_text: str) -> None:
    for arguments in ("all", "required"):
        schema = grammar.arguments_schema(tool, arguments, request_text)
        assert not _properties(schema) & WIDENING, schema
        called = json.loads(
            grammar.arguments_grammar(tool, arguments=arguments, copy_from=request_text)
        )
        assert not _properties(called) & WIDENING, called
    decision = grammar.decision_schema(WIDE, request=request_text)
    for alternative in decision["oneOf"][:-1]:
        assert not _properties(alternative["properties"]["arguments"]) & WIDENING


def test_asked_the_grammar_offers_only_what_was_named() -> None:
    shell = next(t for t in WIDE if t["name"] == "run_shell")
    network = grammar.arguments_schema(shell, "all", "run curl in the sandbox network profile")
    assert network["properties"]["sandbox"]["enum"] == ["network"]
    assert "justification" in network["properties"]
    assert "background" not in network["properties"]
    background = grammar.arguments_schema(shell, "all", "start the server in the background")
    assert "background" in background["properties"]
    assert not {"sandbox", "justification"} & _properties(background)
    # "sandbox" said, but no profile named: nothing to choose from, so nothing offered
    vague = grammar.arguments_schema(shell, "all", "run make, the sandbox is fine")
    assert not {"sandbox", "justification"} & _properties(vague)


def test_a_required_widening_argument_stays() -> None:
    """A tool (an MCP server's) that requires such an argument still gets it: the grammar
    never makes a call its tool would refuse."""
    tool = {
        "name": "deploy",
        "parameters": {
            "type": "object",
            "properties": {"sandbox": {"type": "string"}, "target": {"type": "string"}},
            "required": ["sandbox", "target"],
        },
    }
    assert _properties(grammar.arguments_schema(tool, "all", None)) == {"sandbox", "target"}


@pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is None, reason="no xllamacpp")
def test_the_grammar_llama_cpp_makes_cannot_write_them() -> None:
    import xllamacpp

    text = xllamacpp.json_schema_to_grammar(grammar.decision_grammar(TOOLS, request="run ls"))
    for name in WIDENING:
        assert f'"{name}"' not in text, name
    asked = xllamacpp.json_schema_to_grammar(
        grammar.decision_grammar(TOOLS, request="run ls in the background")
    )
    assert '"background"' in asked  # the check above can fail
