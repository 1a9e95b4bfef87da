"""agentcli.agent.quick_schema agrees with jsonschema whenever it answers, on every built-in
tool's schema and on arguments made to sit near each schema's edges."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from agentcli.agent.quick_schema import conforms
from agentcli.assembly import builtin_tools

TOOLS = list(builtin_tools())
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 2.0, 2.5, -1.5]),
    st.sampled_from(["", "a", "README.md", "src/*.py", "../x", "ls -la", "add", "x" * 600]),
)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3), max_leaves=4)


def _arguments(tool: Any) -> st.SearchStrategy[dict[str, Any]]:
    names = [*tool.parameters.get("properties", {}), "bogus"]
    return st.dictionaries(st.sampled_from(names), VALUES, max_size=len(names))


@settings(max_examples=400, deadline=None)
@given(data=st.data(), tool=st.sampled_from(TOOLS))
def test_agrees_with_jsonschema(data: st.DataObject, tool: Any) -> None:
    args = data.draw(_arguments(tool))
    quick = conforms(tool.parameters, args)
    if quick is not None:
        assert quick == Draft202012Validator(tool.parameters).is_valid(args), (tool.name, args)


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        ({"type": "integer"}, 3.0, True),
        ({"type": "integer"}, True, False),
        ({"type": "number", "minimum": 1}, 0.5, False),
        ({"type": "string", "pattern": "^a"}, "ba", False),
        ({"type": "object", "additionalProperties": False}, {"x": 1}, False),
        ({"type": "object", "required": ["x"]}, {}, False),
        ({"enum": [1, True]}, 1, None),  # numbers against booleans: left to jsonschema
        ({"anyOf": [{"type": "string"}]}, "a", None),  # an unknown keyword
        ({"type": "string", "description": "d", "format": "uri"}, "not a uri", True),
    ],
)
def test_known_corners(schema: dict, value: Any, expected: bool | None) -> None:
    assert conforms(schema, value) is expected
    if expected is not None:
        assert Draft202012Validator(schema).is_valid(value) is expected


def test_every_builtin_schema_is_understood() -> None:
    """So that valid calls of built-in tools never import jsonschema."""
    for tool in TOOLS:
        assert conforms(tool.parameters, {}) is not None, tool.name
