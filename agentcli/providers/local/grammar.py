"""The schemas a small model's decision is written under (llama.cpp turns each into a
grammar): a tool's JSON Schema made fit for a grammar, and the arguments a request spells
out (a path, a URL, a command) limited to the request's own words, so that they are
copied, not invented. Each is narrower than the tool's own schema, never wider: what the
model writes under it, the tool accepts."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentcli.agent.quick_schema import conforms
from agentcli.providers.local import project_tasks, spelled
from agentcli.providers.local.decision import ANSWER

# String fields that hold free text (file contents, code): no length cap in the grammar.
_LONG_FIELDS = {"content", "code", "new_text", "old_text", "command", "question", "text"}
MAX_SHORT_STRING = 200  # characters, for every other string in a call


def _grammar_schema(schema: Any, field: str | None = None) -> Any:
    """A tool's JSON Schema made fit for a grammar: descriptions dropped, short strings
    capped (a small model can otherwise write a path forever)."""
    if isinstance(schema, list):
        return [_grammar_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("description", "title", "examples", "default", "$schema"):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _grammar_schema(sub, name) for name, sub in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties"):
            out[key] = _grammar_schema(value)
        else:
            out[key] = copy.deepcopy(value)
    if out.get("type") == "string" and field not in _LONG_FIELDS and "enum" not in out:
        out["maxLength"] = min(int(out.get("maxLength", MAX_SHORT_STRING)), MAX_SHORT_STRING)
    if out.get("type") == "object" and "properties" in out:
        out.setdefault("additionalProperties", False)
    return out


# Optional arguments that widen what a call may reach: a sandbox profile (the network, or
# none at all), the justification that asks for one, a job that outlives its call. A model
# writing under a grammar fills whatever the grammar offers, so the grammar offers these
# only where the user's request asks for them in words, and then only what it names.
WIDENING = ("sandbox", "justification", "background")


def _asked(name: str, sub: Any, words: set[str]) -> Any:
    """The schema of the widening property `name` as far as the request's `words` ask for
    it, or None when they do not."""
    if name == "background":
        return sub if "background" in words else None
    if name == "sandbox" and isinstance(sub, dict) and isinstance(sub.get("enum"), list):
        named = [value for value in sub["enum"] if value in words]  # "sandbox network"
        return {**sub, "enum": named} if "sandbox" in words and named else None
    return None


def without_unasked(params: dict[str, Any], request: str | None) -> dict[str, Any]:
    """`params` without the optional widening properties the request does not ask for."""
    properties = params.get("properties")
    if not isinstance(properties, dict):
        return params
    required = set(params.get("required") or ())
    words = set(re.findall(r"[a-z][a-z-]*", (request or "").lower()))
    kept = dict(properties)
    for name in ("sandbox", "background"):
        if name in kept and name not in required:
            asked = _asked(name, kept[name], words)
            if asked is None:
                del kept[name]
            else:
                kept[name] = asked
    if "justification" in kept and "justification" not in required and "sandbox" not in kept:
        del kept["justification"]  # it only ever asks for a sandbox
    return {**params, "properties": kept}


def arguments_schema(
    tool: dict[str, Any], arguments: str = "all", request: str | None = None
) -> dict[str, Any]:
    """`arguments="required"` keeps only the required properties (and, for a tool with
    none, its first property as optional): fewer ways for a small model to go wrong.
    Optional properties that widen a call's reach only where `request` asks for them."""
    params = _grammar_schema(tool.get("parameters") or {"type": "object", "properties": {}})
    if arguments == "required" and isinstance(params.get("properties"), dict):
        required = list(params.get("required") or ())
        keep = required or list(params["properties"])[:1]
        params["properties"] = {k: v for k, v in params["properties"].items() if k in keep}
    params = without_unasked(params, request)
    params.setdefault("type", "object")
    params.setdefault("properties", {})
    params["additionalProperties"] = False
    return params


def decision_schema(
    tools: Sequence[dict[str, Any]], *, arguments: str = "all", request: str | None = None
) -> dict:
    """One JSON Schema for the decision: any offered tool with its arguments, or answer."""
    alternatives: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {
                "name": {"const": tool["name"]},
                "arguments": arguments_schema(tool, arguments, request),
            },
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for tool in tools
    ]
    alternatives.append(
        {
            "type": "object",
            "properties": {"name": {"const": ANSWER}},
            "required": ["name"],
            "additionalProperties": False,
        }
    )
    return {"oneOf": alternatives}


def decision_grammar(
    tools: Sequence[dict[str, Any]], *, arguments: str = "all", request: str | None = None
) -> str:
    """The JSON Schema (as text) a whole decision is written under (`choice = "greedy"`);
    the engine turns it into a grammar with llama.cpp's own converter."""
    return json.dumps(decision_schema(tools, arguments=arguments, request=request))


# Arguments a user's request spells out, which a small model should copy rather than
# invent: with `copy_from`, the grammar lets these be only spans of the request.
COPY_FIELDS = {
    "path",
    "url",
    "command",
    "expression",
    "content",
    "query",
    "pattern",
    "old_text",
    "new_text",
}
NOT_COPIED = {("search_files", "pattern")}  # a glob is made, not copied
MAX_SPAN_WORDS = 6


def request_spans(request: str, *, max_words: int = 60) -> list[str]:
    """Every run of up to MAX_SPAN_WORDS consecutive words of the request, as written
    (outer quotes and closing punctuation trimmed) and with each word's quotes taken off."""
    raw = request.split()[:max_words]
    quotes = "\"'`“”‘’"
    clean = [word.strip(quotes).rstrip("?!,;:").strip(quotes) for word in raw]
    spans: dict[str, None] = {}
    for words in (clean, raw):
        for start in range(len(words)):
            for end in range(start + 1, min(len(words), start + MAX_SPAN_WORDS) + 1):
                span = " ".join(w for w in words[start:end] if w)
                span = span.strip(quotes).rstrip("?!.,;:").strip(quotes)
                if span:
                    spans[span] = None
    return list(spans)


def _path_shaped(span: str) -> bool:
    """One word that reads as a path: a name with an extension (one that begins with a
    letter: 2.0.1 and 3.14 are numbers), or with a slash."""
    return " " not in span and bool(re.search(r"/|\w\.[A-Za-z_]|^\.{1,2}$|^~", span))


def path_choices(
    spans: Sequence[str], *, required: bool, workspace: Path | None = None
) -> list[str]:
    """The values a small model may give a path: the request's spans that read as a path
    or name an entry of the workspace (so "list the files" cannot become `files`; a URL is
    no path), and
    `.` when the path may be left out. A required path with no such span may be any
    one-word span (a file to be created need not exist, nor have an extension)."""
    chosen = named_paths(spans, workspace)
    if required:
        words = [span for span in spans if " " not in span and not spelled.urls(span)]
        return chosen or [*words, "."]
    return [*chosen, "."]


def path_kinds(tool: dict[str, Any], name: str = "path") -> set[str]:
    """The kinds of entry ("file", "dir") a path property takes, by its description
    ("File path", "Directory to search"); none said: both."""
    properties = (tool.get("parameters") or {}).get("properties") or {}
    text = str((properties.get(name) or {}).get("description", "")).lower()
    kinds = {
        kind
        for kind, words in (("file", ("file",)), ("dir", ("directory", "folder")))
        if any(word in text for word in words)
    }
    return kinds or {"file", "dir"}


def entry_kind(workspace: Path, path: str) -> str | None:
    """ "file" or "dir" for an entry of the workspace, None for anything else (outside
    it, or missing)."""
    if path.startswith(("/", "~")) or ".." in path.split("/"):
        return None
    try:
        entry = workspace / path
        if entry.is_dir():
            return "dir"
        return "file" if entry.exists() else None
    except (OSError, ValueError):
        return None


def named_entries(tool: dict[str, Any], paths: Sequence[str], workspace: Path | None) -> list[str]:
    """The paths the request names that exist in the workspace as a kind of entry the
    tool's path takes."""
    if workspace is None:
        return []
    takes = path_kinds(tool)
    return [path for path in paths if entry_kind(workspace, path) in takes]


def _names_entry(workspace: Path, span: str) -> bool:
    if span.startswith(("/", "~")) or ".." in span.split("/"):
        return False
    try:
        return (workspace / span).exists()
    except (OSError, ValueError):
        return False


def named_paths(spans: Sequence[str], workspace: Path | None = None) -> list[str]:
    """The spans of a request that name a path (not a URL): see `path_choices`."""
    return [
        span
        for span in spans
        if not spelled.urls(span)
        and (_path_shaped(span) or (workspace is not None and _names_entry(workspace, span)))
    ]


def is_glob(tool: dict[str, Any], name: str) -> bool:
    """Whether the tool's property `name` takes a glob (its description says so)."""
    properties = (tool.get("parameters") or {}).get("properties") or {}
    description = str((properties.get(name) or {}).get("description", ""))
    return (tool["name"], name) in NOT_COPIED or "glob" in description.lower()


def command_values(request: str, workspace: Path | None) -> list[str]:
    """Command lines the request spells out; when it names a task of the project ("run
    the tests"), the project's command for it first, and no line that starts with a word
    that is no program (the `tests` of "run the tests")."""
    found = spelled.commands(request)
    tasks = project_tasks.project_commands(request, workspace)
    if not tasks:
        return found
    programs = [
        line
        for line in found
        if spelled.starts_with_program(line) and not project_tasks.is_task_words(line)
    ]
    return list(dict.fromkeys(tasks + programs))


def spelled_values(
    tool: dict[str, Any],
    name: str,
    request: str,
    paths: Sequence[str],
    workspace: Path | None = None,
) -> list[str]:
    """The values the request spells out for the property `name` of `tool`, by the kind
    of value its name (or, for a glob, its description) says it holds; [] when there is
    none, or the property is of no such kind (agentcli.providers.local.spelled)."""
    if name == "command":
        return command_values(request, workspace)
    if name == "pattern":
        if is_glob(tool, name):
            return spelled.file_globs(request)
        return spelled.search_texts(request, paths)
    if name == "content":
        return spelled.file_contents(request, paths)
    readers = {
        "url": spelled.urls,
        "expression": spelled.expressions,
        "query": spelled.web_queries,
        "old_text": spelled.old_texts,
        "new_text": spelled.new_texts,
    }
    return readers[name](request) if name in readers else []


def _path_values(
    tool: dict[str, Any],
    request: str,
    spans: Sequence[str],
    required: bool,
    workspace: Path | None,
    others: list[str] | None,
) -> list[str]:
    """The values a path may take: the entries the request names of a kind the tool
    takes, when it names any (then the path is no longer optional); else `path_choices`,
    without what another argument spells out (`others`: "find schema.sql", the glob's
    name is not the folder searched) and, for a required path the request names none
    for, the names of files it writes ("put 1.2 into VERSION"). `others` None: the spans
    alone (spelled values are off)."""
    choices = path_choices(spans, required=required, workspace=workspace)
    if others is None:
        return choices
    paths = named_paths(spans, workspace)
    named = named_entries(tool, paths, workspace)
    if named:
        return named
    if required and not paths:
        return spelled.file_names(request) or choices
    kept = [c for c in choices if c == "." or not any(c in value for value in others)]
    return kept or choices


def copy_constrained(
    tool: dict[str, Any],
    schema: dict[str, Any],
    request: str,
    *,
    workspace: Path | None = None,
    spelled: bool = True,
) -> dict[str, Any]:
    """The arguments schema with the copied fields limited to what the request spells out
    for them (`spelled_values`: a URL, an expression, the text to search for...) or, when
    it spells out none, to spans of the request (a path to the spans that can be one, see
    `path_choices`); a glob is made, not copied, unless the request spells one out."""
    spans = request_spans(request)
    if not spans:
        return schema
    properties = dict(schema.get("properties") or {})
    required = set(schema.get("required") or ())
    paths = named_paths(spans, workspace)
    copied = {
        name: sub
        for name, sub in properties.items()
        if name in COPY_FIELDS
        and isinstance(sub, dict)
        and sub.get("type") == "string"
        and "enum" not in sub
    }
    values = {
        name: spelled_values(tool, name, request, paths, workspace) if spelled else [] for name in copied
    }
    for name, sub in copied.items():
        if name == "path":
            others = [v for other, found in values.items() if other != name for v in found]
            choices = _path_values(
                tool, request, spans, name in required, workspace, others if spelled else None
            )
            if choices and "." not in choices:  # "what is in the assets folder?": that one
                required.add(name)
        elif values[name]:
            choices = values[name]
        elif is_glob(tool, name):
            continue
        else:
            choices = spans
        # Only the spans the field itself accepts (its pattern, its lengths): narrower.
        allowed = [choice for choice in choices if conforms(sub, choice) is not False]
        if allowed:
            properties[name] = {"type": "string", "enum": allowed}
    return {**schema, "properties": properties, "required": sorted(required)}


def arguments_grammar(
    tool: dict[str, Any],
    *,
    arguments: str = "all",
    copy_from: str | None = None,
    workspace: Path | None = None,
    spelled: bool = True,
    request: str | None = None,
) -> str:
    """The JSON Schema (as text) of a call's arguments object, for when the tool was
    already chosen (`{"name":"TOOL","arguments":` ends the prompt; the `}` that closes
    the decision is added after). Every value it allows, the tool's own schema accepts;
    `request` (else `copy_from`): what the user asked, for the widening properties."""
    schema = arguments_schema(tool, arguments, request or copy_from)
    if copy_from:
        schema = copy_constrained(tool, schema, copy_from, workspace=workspace, spelled=spelled)
    return json.dumps(schema)
