"""An MCP elicitation's form: the fields of its requested schema (a flat object of strings,
numbers, integers, booleans, single and multiple choices) and what a typed answer to each
means. No input or output here: the REPL asks (agentcli.ui.mcp_requests), this checks."""

from __future__ import annotations

import math
from typing import Any

from agentcli.records import dataclass

KINDS = ("string", "number", "integer", "boolean")
TRUE_WORDS = frozenset({"y", "yes", "true", "1", "on"})
FALSE_WORDS = frozenset({"n", "no", "false", "0", "off"})


class FormError(ValueError):
    """The schema asks for something no terminal field can answer (a nested object...)."""


@dataclass(frozen=True, slots=True)
class Choice:
    value: str
    label: str  # what the user reads: the title, else the value


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    kind: str  # string | number | integer | boolean | choice | choices
    title: str = ""
    description: str = ""
    required: bool = False
    default: Any = None
    choices: tuple[Choice, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    min_items: int | None = None
    max_items: int | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not None

    def parse(self, text: str) -> Any:
        """The value a typed answer means; ValueError says, in a few words, what fits."""
        text = text.strip()
        if self.kind == "boolean":
            word = text.lower()
            if word in TRUE_WORDS or word in FALSE_WORDS:
                return word in TRUE_WORDS
            raise ValueError("answer y or n")
        if self.kind in ("number", "integer"):
            return self._number(text)
        if self.kind == "choice":
            return self._choice(text)
        if self.kind == "choices":
            picked = [self._choice(part) for part in text.split(",") if part.strip()]
            least, most = self.min_items or 0, self.max_items
            if len(picked) < least or (most is not None and len(picked) > most):
                span = f"{least}-{most}" if most is not None else f"at least {least}"
                raise ValueError(f"choose {span}, separated by commas")
            return list(dict.fromkeys(picked))
        return text

    def _number(self, text: str) -> float | int:
        try:
            value: float | int = int(text) if self.kind == "integer" else float(text)
        except ValueError:
            noun = "a whole number" if self.kind == "integer" else "a number"
            raise ValueError(f"answer {noun}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("answer a finite number")
        if (self.minimum is not None and value < self.minimum) or (
            self.maximum is not None and value > self.maximum
        ):
            raise ValueError(f"answer between {self.minimum:g} and {self.maximum:g}")
        return value

    def _choice(self, text: str) -> str:
        text = text.strip()
        if text.isdigit() and 1 <= int(text) <= len(self.choices):
            return self.choices[int(text) - 1].value
        for choice in self.choices:
            if text in (choice.value, choice.label):
                return choice.value
        raise ValueError(f"choose 1-{len(self.choices)} or type one of the choices")


def _choices(spec: dict[str, Any]) -> tuple[Choice, ...]:
    """`enum` (with the older `enumNames`), or `oneOf`/`anyOf` of `{const, title}`."""
    if isinstance(spec.get("enum"), list):
        names = spec.get("enumNames") or []
        values = [str(v) for v in spec["enum"]]
        labels = [str(n) for n in names] if len(names) == len(values) else values
        return tuple(Choice(v, label) for v, label in zip(values, labels, strict=True))
    options = spec.get("oneOf") or spec.get("anyOf")
    if isinstance(options, list) and all(isinstance(o, dict) and "const" in o for o in options):
        return tuple(Choice(str(o["const"]), str(o.get("title") or o["const"])) for o in options)
    return ()


def _bound(spec: dict[str, Any], key: str) -> float | None:
    value = spec.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _items(spec: dict[str, Any], key: str) -> int | None:
    value = spec.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def field_of(name: str, spec: Any, required: bool) -> Field:
    if not isinstance(spec, dict):
        raise FormError(f"field {name!r} has no schema")
    kind = spec.get("type")
    choices: tuple[Choice, ...] = ()
    if kind == "array":
        items = spec.get("items") if isinstance(spec.get("items"), dict) else {}
        choices = _choices(items)
        if not choices:
            raise FormError(f"field {name!r} is a list of something other than choices")
        kind = "choices"
    elif kind in ("string", None):
        choices = _choices(spec)
        kind = "choice" if choices else "string"
        if kind == "string" and spec.get("type") is None:
            raise FormError(f"field {name!r} has no type")
    elif kind not in KINDS:
        raise FormError(f"field {name!r} is of type {kind!r}, which a form cannot ask for")
    return Field(
        name=name,
        kind=kind,
        title=str(spec.get("title") or ""),
        description=str(spec.get("description") or ""),
        required=required,
        default=spec.get("default"),
        choices=choices,
        minimum=_bound(spec, "minimum"),
        maximum=_bound(spec, "maximum"),
        min_items=_items(spec, "minItems"),
        max_items=_items(spec, "maxItems"),
    )


def fields_of(schema: Any) -> list[Field]:
    """The form's fields, in the schema's order. FormError when it is not a flat form."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise FormError("the requested schema is not an object of fields")
    properties = schema.get("properties") or {}
    if not isinstance(properties, dict):
        raise FormError("the requested schema's properties are not a table")
    required = set(schema.get("required") or ())
    return [field_of(name, spec, name in required) for name, spec in properties.items()]


def defaults_only(fields: list[Field]) -> dict[str, Any] | None:
    """The answer the defaults alone give, when they cover every required field; else None
    (nobody may invent an answer)."""
    if any(f.required and not f.has_default for f in fields):
        return None
    return {f.name: f.default for f in fields if f.has_default}
