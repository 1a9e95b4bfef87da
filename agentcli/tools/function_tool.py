"""A typed Python function with a docstring as a tool: the JSON Schema comes from its type
hints, the description from its docstring. Sync functions run in a thread, so a slow one
does not stop the others; async ones are awaited."""

from __future__ import annotations

import asyncio
import enum
import inspect
import json
import types
import typing
from collections.abc import Callable
from typing import Any

from agentcli.risk import Assessment
from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from agentcli.tools.content import JsonPart
from agentcli.tools.dynamic import RISKS, text_subjects

SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean"}


class PluginError(ValueError):
    """A plug-in's function cannot be a tool; the message says why."""


def schema_of(hint: Any) -> dict[str, Any]:
    """JSON Schema for one type hint (the common ones; anything else: any value)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in SIMPLE:
        return {"type": SIMPLE[hint]}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return {"enum": [member.value for member in hint]}
    if origin in (list, tuple, set, frozenset) or hint in (list, tuple, set):
        schema: dict[str, Any] = {"type": "array"}
        if args and args[-1] is not Ellipsis:
            schema["items"] = schema_of(args[0])
        return schema
    if origin is dict or hint is dict:
        return {"type": "object"}
    if origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        if len(members) == 1:
            return schema_of(members[0])
        return {"anyOf": [schema_of(a) for a in members]}
    return {}


def _doc_parts(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """The description (the docstring up to an `Args:` section) and each argument's line."""
    doc = inspect.getdoc(fn) or ""
    head, _, args_section = doc.partition("\nArgs:\n")
    described: dict[str, str] = {}
    for line in args_section.splitlines():
        name, colon, text = line.strip().partition(":")
        name = name.split(" ")[0]
        if colon and name.isidentifier():
            described[name] = text.strip()
    return head.strip(), described


class FunctionTool(Tool):
    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None,
        risk: str,
        source: str,
        examples: list[tuple[str, dict[str, Any]]] | None = None,
    ) -> None:
        if not callable(fn):
            raise PluginError(f"{fn!r} is not a function")
        label = str(risk).strip().lower()
        if label not in RISKS:
            raise PluginError(f"{getattr(fn, '__name__', fn)}: risk must be low, medium or high")
        self.fn = fn
        self.name = name or fn.__name__
        self.source = source
        self._risk = RISKS[label]
        self.risk_summary = label
        self.examples = list(examples or [])
        description, documented = _doc_parts(fn)
        if not description:
            raise PluginError(f"{self.name}: give the function a docstring (the model reads it)")
        self.description = description
        self.parameters = self._schema(documented)

    def _schema(self, documented: dict[str, str]) -> dict[str, Any]:
        hints = typing.get_type_hints(self.fn)
        properties: dict[str, Any] = {}
        required = []
        for param in inspect.signature(self.fn).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            schema = schema_of(hints.get(param.name, Any))
            if param.name in documented:
                schema["description"] = documented[param.name]
            if param.default is param.empty:
                required.append(param.name)
            elif param.default is not None:
                schema["default"] = param.default
            properties[param.name] = schema
        return {"type": "object", "properties": properties, "required": required}

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(
            self._risk, f"{self.name} from {self.source} is rated {self.risk_summary}"
        )

    def rule_subjects(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        return text_subjects(args)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        try:
            if inspect.iscoroutinefunction(self.fn):
                value = await self.fn(**args)
            else:
                value = await asyncio.to_thread(self.fn, **args)
        except ToolFailure:
            raise
        except Exception as error:  # the plug-in's error is the model's to read
            raise ToolFailure(f"{self.name}: {type(error).__name__}: {error}") from None
        return as_output(value)


def as_output(value: Any) -> ToolOutput:
    if isinstance(value, ToolOutput):
        return value
    if value is None:
        return ToolOutput(content="(done)")
    if isinstance(value, str):
        return ToolOutput(content=value)
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return ToolOutput(content=str(value))
    return ToolOutput.of_parts([JsonPart(value)])
