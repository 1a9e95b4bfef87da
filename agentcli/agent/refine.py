"""Input refinement before validation (as the AI SDK does): providers and weak models
send the same intent in different shapes. Normalise them; never invent values."""

from __future__ import annotations

from typing import Any


def _types(schema: dict[str, Any]) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, list):
        return set(kind)
    return {kind} if isinstance(kind, str) else set()


def _coerce_scalar(value: str, types: set[str]) -> Any:
    """A number or boolean sent as a string ("5", "true") becomes what the schema asks for."""
    text = value.strip()
    if "integer" in types and text.lstrip("-").isdigit():
        return int(text)
    if "number" in types:
        try:
            return float(text)
        except ValueError:
            return value
    if "boolean" in types and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return value


def refine_arguments(args: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    refined: dict[str, Any] = {}
    for name, value in args.items():
        prop = properties.get(name)
        if prop is None:
            refined[name] = value  # validation reports unknown names
            continue
        types = _types(prop)
        optional = name not in required
        if value is None and optional and "null" not in types:
            continue  # null for an optional field means "not given"
        if value == "" and optional and "string" not in types:
            continue  # so does "" for an optional non-string field
        if isinstance(value, str) and types and "string" not in types:
            value = _coerce_scalar(value, types)
        refined[name] = value
    return refined
