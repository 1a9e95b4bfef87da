"""A quick answer to "do these tool arguments satisfy this JSON Schema?" for the plain
schemas tools use, without importing jsonschema at startup (what that saves:
bench/standins.py, figures in bench/README.md).

`conforms` says True only when jsonschema (Draft 2020-12, formats not asserted) would accept
the arguments; False when it would not; None for a keyword it does not know. The executor
asks it first and goes to jsonschema only for False or None, so the messages a model sees
for bad arguments are still jsonschema's.
"""

from __future__ import annotations

import re
from typing import Any

_ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "format", "$schema", "$comment"}
)
_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    # jsonschema counts 3.0 as an integer
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def conforms(schema: Any, value: Any) -> bool | None:
    if schema is True or schema == {}:
        return True
    if schema is False:
        return False
    if not isinstance(schema, dict):
        return None
    verdict: bool | None = True
    for key, rule in schema.items():
        if key in _ANNOTATIONS:
            continue
        check = _CHECKS.get(key)
        if check is None:
            return None  # a keyword this does not know: jsonschema decides
        result = check(rule, value, schema)
        if result is None:
            return None
        verdict = verdict and result
    return verdict


def _type(rule: Any, value: Any, schema: dict) -> bool | None:
    names = [rule] if isinstance(rule, str) else rule
    if not isinstance(names, list) or any(n not in _TYPES for n in names):
        return None
    return any(_TYPES[n](value) for n in names)


def _properties(rule: Any, value: Any, schema: dict) -> bool | None:
    if not isinstance(value, dict):
        return True
    verdict: bool | None = True
    for name, sub in rule.items():
        if name in value:
            result = conforms(sub, value[name])
            if result is None:
                return None
            verdict = verdict and result
    return verdict


def _required(rule: Any, value: Any, schema: dict) -> bool | None:
    return not isinstance(value, dict) or all(name in value for name in rule)


def _additional(rule: Any, value: Any, schema: dict) -> bool | None:
    if not isinstance(value, dict):
        return True
    if "patternProperties" in schema:
        return None
    return _each(rule, [value[k] for k in value if k not in schema.get("properties", {})])


def _items(rule: Any, value: Any, schema: dict) -> bool | None:
    if not isinstance(value, list):
        return True
    return _each(rule, value) if isinstance(rule, dict | bool) else None


def _each(rule: Any, values: list[Any]) -> bool | None:
    """Every value against one schema: None if any answer is None."""
    results = [conforms(rule, value) for value in values]
    return None if None in results else all(results)


def _enum(rule: Any, value: Any, schema: dict) -> bool | None:
    if not all(isinstance(option, str) for option in rule):
        return None  # jsonschema's equality of numbers and booleans has corners
    return isinstance(value, str) and value in rule


def _bound(compare: Any) -> Any:
    def check(rule: Any, value: Any, schema: dict) -> bool | None:
        if not _number(rule):
            return None
        return not _number(value) or compare(value, rule)

    return check


def _length(compare: Any, kind: type) -> Any:
    def check(rule: Any, value: Any, schema: dict) -> bool | None:
        return not isinstance(value, kind) or compare(len(value), rule)

    return check


def _pattern(rule: Any, value: Any, schema: dict) -> bool | None:
    if not isinstance(value, str):
        return True
    try:
        return re.search(rule, value) is not None
    except re.error:
        return None


_CHECKS = {
    "type": _type,
    "properties": _properties,
    "required": _required,
    "additionalProperties": _additional,
    "items": _items,
    "enum": _enum,
    "minimum": _bound(lambda v, r: v >= r),
    "maximum": _bound(lambda v, r: v <= r),
    "exclusiveMinimum": _bound(lambda v, r: v > r),
    "exclusiveMaximum": _bound(lambda v, r: v < r),
    "minLength": _length(lambda n, r: n >= r, str),
    "maxLength": _length(lambda n, r: n <= r, str),
    "minItems": _length(lambda n, r: n >= r, list),
    "maxItems": _length(lambda n, r: n <= r, list),
    "pattern": _pattern,
}
