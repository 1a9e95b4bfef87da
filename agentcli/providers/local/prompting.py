"""What the local model is shown and what its output means: pure functions, no model.

A tiny model cannot be trusted with a free-form tool-call syntax, so a step that may call
a tool is split in two:

1. the *decision*: the model writes one JSON object, constrained by a grammar built from
   `decision_schema()`: `{"name": TOOL, "arguments": {...}}` with TOOL one of the tools
   and the arguments constrained by that tool's JSON Schema, or `{"name": "answer"}`;
2. for `answer`, a second, free-text generation writes the answer (streamed).

After a tool result the model answers in free text (up to `tool_rounds` tool calls per
user turn), shown the result and the user's request again.
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentcli.messages import Message

ANSWER = "answer"  # the decision "no tool: answer in words"
COMPACT = (",", ":")  # JSON separators of a decision: the grammar allows no other spacing

# Tools a tiny model is offered by default: the ones a newcomer's first questions need.
# (The rest still run when a bigger model asks for them; `tools = "all"` offers them all.)
CORE_TOOLS = (
    "read_file",
    "list_directory",
    "search_files",
    "search_content",
    "calculator",
    "run_shell",
    "write_file",
    "system_info",
    "fetch_url",
    "web_search",
)

# String fields that hold free text (file contents, code): no length cap in the grammar.
_LONG_FIELDS = {"content", "code", "new_text", "old_text", "command", "question", "text"}
MAX_SHORT_STRING = 200  # characters, for every other string in a call


@dataclass(frozen=True, slots=True)
class Example:
    request: str
    tool: str  # a tool name, or ANSWER
    arguments: dict[str, Any] | None = None


# Few-shot examples: a bank of typical requests, from which the ones most like the user's
# request are shown (`select_examples`). Deliberately other files, words and numbers than
# bench/local_model.py uses.
EXAMPLES: tuple[Example, ...] = (
    Example("show me setup.py", "read_file", {"path": "setup.py"}),
    Example("what does main.go contain?", "read_file", {"path": "main.go"}),
    Example("read the file docs/intro.txt", "read_file", {"path": "docs/intro.txt"}),
    Example("open LICENSE", "read_file", {"path": "LICENSE"}),
    Example("what is in package.json?", "read_file", {"path": "package.json"}),
    Example("what files are in this folder?", "list_directory", {}),
    Example("list the contents of the tests directory", "list_directory", {"path": "tests"}),
    Example("ls", "list_directory", {}),
    Example("show the files in lib", "list_directory", {"path": "lib"}),
    Example("where is the word main used?", "search_content", {"pattern": "main"}),
    Example("search the code for HACK", "search_content", {"pattern": "HACK"}),
    Example("which files contain the text password?", "search_content", {"pattern": "password"}),
    Example("grep for import os", "search_content", {"pattern": "import os"}),
    Example("find all the json files", "search_files", {"pattern": "**/*.json"}),
    Example("find files named config", "search_files", {"pattern": "**/*config*"}),
    Example("where are the javascript files?", "search_files", {"pattern": "**/*.js"}),
    Example("how much is 12 + 30 * 2?", "calculator", {"expression": "12 + 30 * 2"}),
    Example("what is 45/9?", "calculator", {"expression": "45/9"}),
    Example("compute 3 to the power of 4", "calculator", {"expression": "3**4"}),
    Example("calculate sqrt(144)", "calculator", {"expression": "sqrt(144)"}),
    Example("run the command ls -la", "run_shell", {"command": "ls -la"}),
    Example("execute make test", "run_shell", {"command": "make test"}),
    Example("run python --version", "run_shell", {"command": "python --version"}),
    Example("which CPU does this computer have?", "system_info", {}),
    Example("how much disk space is free?", "system_info", {}),
    Example("what OS am I on?", "system_info", {}),
    Example("download https://python.org", "fetch_url", {"url": "https://python.org"}),
    Example("get the page http://localhost:8000/", "fetch_url", {"url": "http://localhost:8000/"}),
    Example(
        "write hello world to out.txt", "write_file", {"path": "out.txt", "content": "hello world"}
    ),
    Example(
        "create notes.md with the text TODO", "write_file", {"path": "notes.md", "content": "TODO"}
    ),
    Example("search the web for rust tutorials", "web_search", {"query": "rust tutorials"}),
    Example("print the file setup.cfg", "read_file", {"path": "setup.cfg"}),
    Example("view index.html", "read_file", {"path": "index.html"}),
    Example("show me what is in .gitignore", "read_file", {"path": ".gitignore"}),
    Example("read me Dockerfile", "read_file", {"path": "Dockerfile"}),
    Example("open src/main.rs", "read_file", {"path": "src/main.rs"}),
    Example("what's inside data.csv?", "read_file", {"path": "data.csv"}),
    Example("list this directory", "list_directory", {}),
    Example("which files are here?", "list_directory", {}),
    Example("show me the folder structure", "list_directory", {}),
    Example("list everything in src", "list_directory", {"path": "src"}),
    Example("what is in the build directory?", "list_directory", {"path": "build"}),
    Example("find where load_config is used", "search_content", {"pattern": "load_config"}),
    Example("search for XXX comments", "search_content", {"pattern": "XXX"}),
    Example(
        "look for the string localhost in the code", "search_content", {"pattern": "localhost"}
    ),
    Example("which files import requests?", "search_content", {"pattern": "import requests"}),
    Example("find occurrences of deprecated", "search_content", {"pattern": "deprecated"}),
    Example("find all the css files", "search_files", {"pattern": "**/*.css"}),
    Example("locate files ending in .log", "search_files", {"pattern": "**/*.log"}),
    Example("are there any shell scripts?", "search_files", {"pattern": "**/*.sh"}),
    Example("find the rust source files", "search_files", {"pattern": "**/*.rs"}),
    Example("list every test file", "search_files", {"pattern": "**/*test*"}),
    Example("compute 100 - 37", "calculator", {"expression": "100 - 37"}),
    Example("how much is 250 / 5?", "calculator", {"expression": "250 / 5"}),
    Example("evaluate (2+3)*4", "calculator", {"expression": "(2+3)*4"}),
    Example("what is 15.5 * 3?", "calculator", {"expression": "15.5 * 3"}),
    Example("run git log", "run_shell", {"command": "git log"}),
    Example("execute ./build.sh", "run_shell", {"command": "./build.sh"}),
    Example("run the tests with pytest", "run_shell", {"command": "pytest"}),
    Example("please run cargo build", "run_shell", {"command": "cargo build"}),
    Example("how much RAM is there?", "system_info", {}),
    Example("what kind of processor is this?", "system_info", {}),
    Example("how many CPUs are there?", "system_info", {}),
    Example("which Python version is installed?", "system_info", {}),
    Example("open https://docs.python.org/3/", "fetch_url", {"url": "https://docs.python.org/3/"}),
    Example(
        "what does https://news.ycombinator.com say?",
        "fetch_url",
        {"url": "https://news.ycombinator.com"},
    ),
    Example(
        "save the word ready into state.txt",
        "write_file",
        {"path": "state.txt", "content": "ready"},
    ),
    Example("look up the weather in Paris online", "web_search", {"query": "weather in Paris"}),
    Example("google how to install node", "web_search", {"query": "how to install node"}),
    Example("what does HTTP stand for?", ANSWER),
    Example("how are you?", ANSWER),
    Example("summarize the plot of Romeo and Juliet", ANSWER),
    Example("translate hello into French", ANSWER),
    Example("hello there!", ANSWER),
    Example("what is the capital of Italy?", ANSWER),
    Example("tell me a joke", ANSWER),
    Example("thank you!", ANSWER),
    Example("who wrote Hamlet?", ANSWER),
    Example("explain what a variable is", ANSWER),
    Example("write a short poem about autumn", ANSWER),
)

_STOP_WORDS = frozenset(
    ["a", "an", "the", "of", "to", "for", "me", "my", "please", "can", "could", "you", "i"]
)


_MATH = re.compile(r"[0-9.()]*[0-9][0-9.()]*(?:(?:[-+*/^%]|\*\*)[0-9.()]+)+")
# load_config, parseArgs, API_KEY: a name in code
_IDENTIFIER = re.compile(r"[a-z]+(?:_[a-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+|[A-Z]+(?:_[A-Z0-9]+)+")
_FUNCTION_CALL = re.compile(r"[a-z]{2,5}\([0-9.,+*/^% -]+\)")  # sqrt(144), log(2)


def _stem(word: str) -> str:
    """A crude stem: plural taken off, then the first five letters ("files" and "file",
    "contents" and "content" alike)."""
    if word.isalpha():
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        return word[:5]
    return word


def _features(text: str) -> set[str]:
    """Words, word pairs and shapes (a file name, a number, a URL, arithmetic) that make
    two requests alike."""
    features: set[str] = set()
    words: list[str] = []
    for raw in text.split():
        word = raw.strip("?!,;:'\"").lower()
        if not word:
            continue
        if re.match(r"https?://", word):
            words.append("<url>")
        elif _MATH.fullmatch(word) or _FUNCTION_CALL.fullmatch(word):  # 45/9: not a path
            words.append("<math>")
        elif re.fullmatch(r"[0-9.]+", word.strip("()")):
            words.append("<number>")
        elif re.fullmatch(r"\*?\.[a-z0-9]{1,5}", word):
            words.append("<ext>")  # .log, *.py: a kind of file
        elif re.fullmatch(r"[\w.-]*\w\.[a-z0-9]{1,5}", word) or "/" in word.strip("/"):
            words.append("<file>")
        elif re.fullmatch(_IDENTIFIER, raw.strip("?!,;:'\"")):
            words.append("<ident>")  # load_config, parseArgs: a name in code
        elif re.fullmatch(r"[-+*/^%x]|\*\*", word):
            words.append("<op>")
        elif word not in _STOP_WORDS:
            words.append(_stem(word.strip("()")))
    features.update(words)
    features.update(f"{a} {b}" for a, b in itertools.pairwise(words))
    return features


@functools.cache
def _feature_weights() -> dict[str, float]:
    """Inverse document frequency over the example bank: a feature most examples share
    ("what", "show") tells less about the tool than a rare one ("<math>", "grep")."""
    counts: dict[str, int] = {}
    for example in EXAMPLES:
        for feature in _features(example.request):
            counts[feature] = counts.get(feature, 0) + 1
    total = len(EXAMPLES)
    return {feature: math.log((total + 1) / (n + 1)) + 1 for feature, n in counts.items()}


def _weight(feature: str) -> float:
    return _feature_weights().get(feature, math.log(len(EXAMPLES) + 1) + 1)


def select_examples(
    request: str, tools: Sequence[dict[str, Any]], k: int = 8, *, exclude: str | None = None
) -> list[Example]:
    """The `k` examples most like `request` (usable with the offered tools), least alike
    first: a tiny model follows the last, most similar example best. At least one
    `answer` example is always among them, so that answering stays a choice."""
    pool = [example for example in examples_for(tools) if example.request != exclude]
    ranked = sorted(pool, key=lambda example: similarity(request, example.request), reverse=True)
    chosen: list[Example] = []
    per_tool: dict[str, int] = {}
    for example in ranked:
        if len(chosen) >= k:
            break
        if per_tool.get(example.tool, 0) >= 2:
            continue
        per_tool[example.tool] = per_tool.get(example.tool, 0) + 1
        chosen.append(example)
    if not any(example.tool == ANSWER for example in chosen):
        answer = next(example for example in ranked if example.tool == ANSWER)
        chosen[-1:] = [answer] if len(chosen) >= k else [*chosen[-1:], answer]
    return sorted(chosen, key=lambda example: similarity(request, example.request))


def similarity(a: str, b: str) -> float:
    """0..1: how alike two requests are (cosine of their feature sets, each feature
    weighted by its rarity among the examples)."""
    fa, fb = _features(a), _features(b)
    if not fa or not fb:
        return 0.0
    shared = sum(_weight(f) ** 2 for f in fa & fb)
    norm_a = sum(_weight(f) ** 2 for f in fa)
    norm_b = sum(_weight(f) ** 2 for f in fb)
    return shared / (norm_a * norm_b) ** 0.5


def tool_prior(
    request: str, tools: Sequence[dict[str, Any]], *, exclude: str | None = None
) -> dict[str, float]:
    """For each offered tool (and `answer`): the similarity of the request to that
    tool's most alike example; 0 for a tool without examples."""
    prior = {tool["name"]: 0.0 for tool in tools}
    prior[ANSWER] = 0.0
    for example in examples_for(tools):
        if example.request != exclude:
            prior[example.tool] = max(prior[example.tool], similarity(request, example.request))
    return prior


# What a user who wants each tool says it is for, in a user's words: the "channel" score
# of a tool is how likely the request is after "The user wants to INTENT. The user says:".
TOOL_INTENTS = {
    "read_file": "show, open, print or read the contents of a file",
    "list_directory": "list the files and folders in a directory",
    "search_content": "search for a word or text inside the files, like grep",
    "search_files": "find files by their name or extension, like all .py files",
    "calculator": "calculate a math expression with numbers",
    "run_shell": "run or execute a shell command",
    "system_info": "know about this computer: its operating system, CPU, memory or disk",
    "fetch_url": "fetch or download a web page from a URL",
    "write_file": "create or write a file with some content",
    "web_search": "search the web or the internet",
    "edit_file": "change or replace some text in a file",
    "create_directory": "create a new directory or folder",
    "run_python": "run some Python code",
    "ask_user": "be asked a question",
}
ANSWER_INTENT = "chat, ask a general knowledge question, or get a text written such as a poem"


def intent_prompt(name: str, tools: Sequence[dict[str, Any]]) -> str:
    if name == ANSWER:
        intent = ANSWER_INTENT
    elif name in TOOL_INTENTS:
        intent = TOOL_INTENTS[name]
    else:
        tool = next((t for t in tools if t["name"] == name), {"description": name})
        intent = "use a tool that does this: " + first_sentence(tool.get("description", name))
    return f"The user wants to {intent}. The user says:"


@dataclass(frozen=True, slots=True)
class Decision:
    name: str  # a tool name, or ANSWER
    arguments: str = "{}"  # the JSON text of the arguments, as the model wrote it

    @property
    def is_call(self) -> bool:
        return self.name != ANSWER


@dataclass(frozen=True, slots=True)
class Turn:
    role: Literal["system", "user", "assistant"]
    content: str


# --- the tools the model is shown -------------------------------------------------------


def offered_tools(tools: Sequence[dict[str, Any]], which: str | Sequence[str]) -> list[dict]:
    """The tools put in the prompt and the grammar: `"core"` (CORE_TOOLS, in the order
    of the request), `"all"`, or a list of names."""
    if which == "all":
        return list(tools)
    names = set(CORE_TOOLS if which == "core" else which)
    return [tool for tool in tools if tool["name"] in names]


def first_sentence(text: str, limit: int = 110) -> str:
    text = " ".join(text.split())
    match = re.match(r"(.+?(?<!e\.g)(?<!i\.e)[.!?])(\s|$)", text)
    sentence = match.group(1) if match else text
    if len(sentence) > limit:
        sentence = sentence[: limit - 1].rstrip() + "…"
    return sentence


def signature(tool: dict[str, Any]) -> str:
    params = tool.get("parameters") or {}
    required = set(params.get("required") or ())
    names = [name if name in required else f"{name}?" for name in (params.get("properties") or {})]
    return f"{tool['name']}({', '.join(names)})"


def tool_catalog(tools: Sequence[dict[str, Any]]) -> str:
    lines = [f"- {signature(tool)}: {first_sentence(tool.get('description', ''))}"
             for tool in tools]  # fmt: skip
    lines.append(f"- {ANSWER}: no tool needed; answer in words.")
    return "\n".join(lines)


def render_decision(name: str, arguments: dict[str, Any] | str | None = None) -> str:
    """The JSON a decision is written as (few-shot examples and the history)."""
    if name == ANSWER:
        return json.dumps({"name": ANSWER}, separators=COMPACT)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            arguments = {}
    if not isinstance(arguments, dict):
        arguments = {}
    return json.dumps(
        {"name": name, "arguments": arguments}, ensure_ascii=False, separators=COMPACT
    )


def examples_for(tools: Sequence[dict[str, Any]]) -> list[Example]:
    names = {tool["name"] for tool in tools}
    return [ex for ex in EXAMPLES if ex.tool == ANSWER or ex.tool in names]


def decision_system_prompt(tools: Sequence[dict[str, Any]]) -> str:
    return (
        "You are a helpful assistant working in a terminal on the user's project. For each "
        "request, choose one tool to call, or answer directly.\n"
        f"Tools:\n{tool_catalog(tools)}\n"
        'Reply with JSON only: {"name": TOOL, "arguments": {...}} to call a tool, or '
        f'{{"name": "{ANSWER}"}} when no tool is needed.'
    )


# --- the grammar --------------------------------------------------------------------------


def _grammar_schema(schema: Any, field: str | None = None) -> Any:
    """A tool's JSON Schema made fit for a grammar: descriptions dropped, short strings
    capped (a tiny model can otherwise write a path forever)."""
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


def arguments_schema(tool: dict[str, Any], arguments: str = "all") -> dict[str, Any]:
    """`arguments="required"` keeps only the required properties (and, for a tool with
    none, its first property as optional): fewer ways for a tiny model to go wrong."""
    params = _grammar_schema(tool.get("parameters") or {"type": "object", "properties": {}})
    if arguments == "required" and isinstance(params.get("properties"), dict):
        required = list(params.get("required") or ())
        keep = required or list(params["properties"])[:1]
        params["properties"] = {k: v for k, v in params["properties"].items() if k in keep}
    params.setdefault("type", "object")
    params.setdefault("properties", {})
    params["additionalProperties"] = False
    return params


def decision_schema(tools: Sequence[dict[str, Any]], *, arguments: str = "all") -> dict:
    """One JSON Schema for the decision: any offered tool with its arguments, or answer."""
    alternatives: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {
                "name": {"const": tool["name"]},
                "arguments": arguments_schema(tool, arguments),
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


def decision_grammar(tools: Sequence[dict[str, Any]], *, arguments: str = "all") -> str:
    """The decision's GBNF grammar (llama.cpp), in compact JSON: the spacing the examples
    use, so that a tiny model never wanders off their form. Imports llama_cpp's schema
    converter (pure Python, but its package loads the native library)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf = json_schema_to_gbnf(json.dumps(decision_schema(tools, arguments=arguments)))
    return compact_spacing(gbnf)


def compact_spacing(gbnf: str) -> str:
    lines = ['space ::= ""' if line.startswith("space ::=") else line for line in gbnf.splitlines()]
    return "\n".join(lines) + "\n"


# Arguments a user's request spells out, which a tiny model should copy rather than
# invent: with `copy_from`, the grammar lets these be only spans of the request.
COPY_FIELDS = {"path", "url", "command", "expression", "content", "query", "pattern"}
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
    """One word that reads as a path: a name with an extension, or with a slash."""
    return " " not in span and bool(re.search(r"/|\w\.\w|^\.{1,2}$|^~", span))


def path_choices(
    spans: Sequence[str], *, required: bool, workspace: Path | None = None
) -> list[str]:
    """The values a tiny model may give a path: the request's spans that read as a path
    or name an entry of the workspace (so "list the files" cannot become `files`), and
    `.` when the path may be left out. A required path with no such span may be any
    one-word span (a file to be created need not exist, nor have an extension)."""
    chosen = [
        span
        for span in spans
        if _path_shaped(span) or (workspace is not None and _names_entry(workspace, span))
    ]
    if required:
        return chosen or [*(span for span in spans if " " not in span), "."]
    return [*chosen, "."]


def _names_entry(workspace: Path, span: str) -> bool:
    if span.startswith(("/", "~")) or ".." in span.split("/"):
        return False
    try:
        return (workspace / span).exists()
    except (OSError, ValueError):
        return False


def copy_constrained(
    tool: dict[str, Any],
    schema: dict[str, Any],
    request: str,
    *,
    workspace: Path | None = None,
) -> dict[str, Any]:
    """The arguments schema with the copied fields limited to spans of the request (a
    path to the spans that can be one, see `path_choices`)."""
    spans = request_spans(request)
    if not spans:
        return schema
    properties = dict(schema.get("properties") or {})
    required = set(schema.get("required") or ())
    for name, sub in properties.items():
        if name not in COPY_FIELDS or (tool["name"], name) in NOT_COPIED:
            continue
        if not isinstance(sub, dict) or sub.get("type") != "string" or "enum" in sub:
            continue
        if name == "path":
            choices = path_choices(spans, required=name in required, workspace=workspace)
        else:
            choices = spans
        properties[name] = {"type": "string", "enum": choices}
    return {**schema, "properties": properties}


def arguments_grammar(
    tool: dict[str, Any],
    *,
    arguments: str = "all",
    copy_from: str | None = None,
    workspace: Path | None = None,
) -> str:
    """GBNF for a call's arguments object and the `}` that closes the decision, for when
    the tool was already chosen (`{"name":"TOOL","arguments":` is in the prompt)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    schema = arguments_schema(tool, arguments)
    if copy_from:
        schema = copy_constrained(tool, schema, copy_from, workspace=workspace)
    gbnf = json_schema_to_gbnf(json.dumps(schema))
    gbnf = re.sub(r"^root ::=", "call-arguments ::=", gbnf, flags=re.MULTILINE)
    return compact_spacing(gbnf + '\nroot ::= call-arguments "}"')


def decision_prefix() -> str:
    """What every decision starts with; the prompt ends with it when names are scored."""
    return '{"name":"'


def parse_decision(text: str, tool_names: Iterable[str]) -> Decision:
    """The decision the model wrote. Raises ValueError when it is not one (cut short by a
    bound, or an unknown name: the grammar makes both rare)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not complete JSON ({exc.msg}): {text[:120]!r}") from None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise ValueError(f"no tool name in {text[:120]!r}")
    name = data["name"]
    if name == ANSWER:
        return Decision(ANSWER)
    if name not in set(tool_names):
        raise ValueError(f"unknown tool {name!r}")
    arguments = data.get("arguments", {})
    if not isinstance(arguments, dict):
        raise ValueError(f"arguments of {name} are not an object: {arguments!r}")
    return Decision(name, json.dumps(arguments, ensure_ascii=False))


# --- the conversation ---------------------------------------------------------------------


def clip(text: str, limit: int) -> str:
    """At most `limit` characters: the head, and a note of what was cut."""
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"\n[... {len(text) - limit} more characters cut]"


_NUMBERED = re.compile(r"^ *\d+\t", re.MULTILINE)


def plain_lines(text: str) -> str:
    """read_file's `cat -n` numbering taken off: a tiny model repeats the numbers
    instead of reading the lines."""
    lines = text.splitlines()
    if len(_NUMBERED.findall(text)) >= max(1, len(lines) // 2):
        return _NUMBERED.sub("", text)
    return text


def _result_body(message: Message, limit: int) -> str:
    return clip(plain_lines(message.content.strip()), limit)


def _tool_result_text(name: str, message: Message, limit: int) -> str:
    body = _result_body(message, limit)
    if message.error:
        return f"The tool {name} failed: {body or message.error}"
    return f"Result of {name}:\n{body}" if body else f"The tool {name} returned nothing."


def quote_results(messages: Sequence[Message], *, limit: int = 6000) -> str:
    """The results of the last step's calls, shown as they are: what a tiny model's
    answer after a tool becomes, since it misquotes what it was given (it answered
    17*23 with 409 right after the calculator said 391)."""
    calls: dict[str, Any] = {}
    results: list[Message] = []
    for message in reversed(messages):
        if message.role != "tool":
            if message.role == "assistant":
                calls = {call.id: call for call in message.tool_calls}
            break
        results.insert(0, message)
    parts = []
    for message in results:
        call = calls.get(message.tool_call_id or "")
        shown = _call_text(call) if call is not None else "the tool"
        body = _result_body(message, limit)
        if message.error:
            parts.append(f"{shown} failed: {body or message.error}")
        elif not body:
            parts.append(f"{shown} returned nothing.")
        else:
            fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", body)), default=0))
            parts.append(f"{shown}:\n\n{fence}\n{body}\n{fence}")
    return "\n\n".join(parts)


def to_turns(
    messages: Sequence[Message], *, result_chars: int = 6000, calls: str = "json"
) -> list[Turn]:
    """The history as alternating user/assistant turns (Gemma's template and others
    refuse anything else): a call is the assistant's JSON decision (`calls="json"`) or
    left out, its result then told in the user's turn (`calls="text"`: a tiny model
    shown JSON answers would answer in JSON); neighbours of one role are merged."""
    names: dict[str, str] = {}
    turns: list[Turn] = []

    def add(role: Literal["user", "assistant"], text: str) -> None:
        if turns and turns[-1].role == role:
            turns[-1] = Turn(role, f"{turns[-1].content}\n\n{text}".strip())
        else:
            turns.append(Turn(role, text))

    for message in messages:
        if message.role == "user":
            add("user", message.content)
        elif message.role == "assistant":
            parts = [message.content.strip()] if message.content.strip() else []
            for call in message.tool_calls:
                names[call.id] = call.name if calls == "json" else _call_text(call)
                if calls == "json":
                    parts.append(render_decision(call.name, call.arguments))
            if parts:
                add("assistant", "\n".join(parts))
        elif message.role == "tool":
            name = names.get(message.tool_call_id or "", "the tool")
            add("user", _tool_result_text(name, message, result_chars))
    if turns and turns[0].role != "user":
        turns.insert(0, Turn("user", "(continued)"))
    return turns


def _call_text(call: Any) -> str:
    try:
        arguments = json.loads(call.arguments or "{}")
    except ValueError:
        arguments = {}
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return f"{call.name}({shown})" if isinstance(arguments, dict) else call.name


def last_user_request(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            return message.content
    return ""


def tool_rounds_since_user(messages: Sequence[Message]) -> int:
    """How many assistant steps with tool calls came after the last user message."""
    rounds = 0
    for message in reversed(messages):
        if message.role == "user":
            break
        if message.role == "assistant" and message.tool_calls:
            rounds += 1
    return rounds


def calls_since_user(messages: Sequence[Message]) -> set[tuple[str, str]]:
    """(name, canonical arguments) of the calls made since the last user message."""
    seen: set[tuple[str, str]] = set()
    for message in reversed(messages):
        if message.role == "user":
            break
        for call in message.tool_calls:
            seen.add((call.name, canonical_arguments(call.arguments)))
    return seen


def canonical_arguments(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments or "{}"), sort_keys=True)
    except ValueError:
        return arguments


def answer_turns(
    system: str,
    messages: Sequence[Message],
    *,
    result_chars: int = 6000,
) -> list[Turn]:
    """The conversation for a free-text answer. After a tool result, the last user turn
    restates the request, so a tiny model answers it rather than describing the result."""
    turns = to_turns(messages, result_chars=result_chars, calls="text")
    if messages and messages[-1].role == "tool" and turns and turns[-1].role == "user":
        request = last_user_request(messages)
        turns[-1] = Turn(
            "user", f"{turns[-1].content}\n\nUsing this result, answer my request: {request}"
        )
    return [Turn("system", system), *turns] if system else turns


ANSWER_SYSTEM = (
    "You are a helpful assistant working in a terminal on the user's project. Answer "
    "briefly and accurately, using the tool results you are given."
)


def decision_turns(
    tools: Sequence[dict[str, Any]],
    messages: Sequence[Message],
    *,
    examples: Sequence[Example] = (),
    result_chars: int = 6000,
) -> list[Turn]:
    """System prompt with the tool list, few-shot examples (`select_examples`) as
    earlier turns, then the conversation, whose last turn is the user's."""
    turns = [Turn("system", decision_system_prompt(tools))]
    for example in examples:
        turns.append(Turn("user", example.request))
        turns.append(Turn("assistant", render_decision(example.tool, example.arguments)))
    turns.extend(to_turns(messages, result_chars=result_chars))
    return turns


def argument_turns(
    tool: dict[str, Any],
    messages: Sequence[Message],
    *,
    result_chars: int = 6000,
) -> list[Turn]:
    """The prompt for writing the arguments of a call to `tool`, once chosen: only that
    tool described, only its examples shown."""
    system = (
        "You are a helpful assistant working in a terminal on the user's project. You call "
        f"the tool {signature(tool)}: {first_sentence(tool.get('description', ''))}\n"
        'Reply with JSON only: {"name": TOOL, "arguments": {...}}.'
    )
    turns = [Turn("system", system)]
    request = last_user_request(messages)
    own = [example for example in EXAMPLES if example.tool == tool["name"]]
    for example in sorted(own, key=lambda example: similarity(request, example.request)):
        turns.append(Turn("user", example.request))
        turns.append(Turn("assistant", render_decision(example.tool, example.arguments)))
    turns.extend(to_turns(messages, result_chars=result_chars))
    return turns


# What stands in for the request when the prompt's own bias is measured ("contextual
# calibration"): a tiny model shown a few-shot prompt favours some names whatever the
# request says, and that bias is taken off.
CONTENT_FREE = "N/A"


@dataclass(frozen=True, slots=True)
class ChoiceScores:
    """What the scored choice weighs, one value per candidate (answering last)."""

    candidates: list[str]
    direct: list[float]  # log P(name | few-shot prompt and the request)
    content_free: list[float] | None  # log P(name | the same prompt, request CONTENT_FREE)
    channel: list[float] | None  # log P(request | "the user wants to INTENT")
    channel_free: list[float] | None  # log P(CONTENT_FREE | the same intent)
    prior: list[float]  # likeness of the request to each tool's examples


@dataclass(frozen=True, slots=True)
class ChoiceWeights:
    """The defaults were chosen by `bench/local_model.py --calibrate` (leave-one-out over
    EXAMPLES) for SmolLM2-135M."""

    calibration: float = 0.5
    channel_weight: float = 1.0
    prior_weight: float = 12.0
    answer_bias: float = 2.0


def _normalized(values: Sequence[float]) -> list[float]:
    top = max(values)
    total = math.log(sum(math.exp(v - top) for v in values)) + top
    return [v - total for v in values]


def combine_scores(scores: ChoiceScores, weights: ChoiceWeights) -> list[float]:
    """One score per candidate: the model's log-probability of writing the name after
    the few-shot prompt, less `calibration` times the prompt's own bias, plus how much
    likelier the request is under the tool's intent than a content-free one (each
    normalized over the candidates), plus the examples' likeness."""
    final = _normalized(scores.direct)
    if scores.content_free is not None and weights.calibration:
        bias = _normalized(scores.content_free)
        final = [f - weights.calibration * b for f, b in zip(final, bias, strict=True)]
    if scores.channel is not None and weights.channel_weight:
        free = scores.channel_free or [0.0] * len(scores.channel)
        channel = _normalized([c - f for c, f in zip(scores.channel, free, strict=True)])
        final = [f + weights.channel_weight * c for f, c in zip(final, channel, strict=True)]
    final = [f + weights.prior_weight * p for f, p in zip(final, scores.prior, strict=True)]
    final[-1] += weights.answer_bias
    return final


def with_request(messages: Sequence[Message], request: str) -> list[Message]:
    """The conversation with its last user message replaced by `request`."""
    out = list(messages)
    for index in range(len(out) - 1, -1, -1):
        if out[index].role == "user":
            out[index] = Message.user(request)
            break
    return out


# --- completion-style prompts (for base models, which know no chat template) ------------


def plain_decision_prompt(
    tools: Sequence[dict[str, Any]], request: str, *, examples: Sequence[Example] = ()
) -> str:
    lines = [
        "Each request is followed by the one tool call that serves it, as JSON, or by "
        f'{{"name": "{ANSWER}"}} when no tool is needed.',
        f"Tools:\n{tool_catalog(tools)}",
        "",
    ]
    for example in examples:
        lines.append(f"Request: {example.request}")
        lines.append(f"Call: {render_decision(example.tool, example.arguments)}")
    lines.append(f"Request: {' '.join(request.split())}")
    lines.append("Call:")
    return "\n".join(lines) + " "


PLAIN_STOP = ("\nRequest:", "\n\n", "\nResult of", "\nAnswer:")


def plain_answer_prompt(messages: Sequence[Message], *, result_chars: int = 3000) -> str:
    """A completion prompt for base models: the request, any tool results, `Answer:`."""
    lines = [
        "Below, a helpful assistant answers a user's request in one or two clear sentences,",
        "using the tool result it is given.",
        "",
        "Request: how many lines does notes.txt have?",
        'Result of read_file(path="notes.txt"):',
        "     1\tbuy milk",
        "     2\tcall Anna",
        'Answer: notes.txt has 2 lines: "buy milk" and "call Anna".',
        "",
    ]
    for turn in to_turns(messages, result_chars=result_chars, calls="text")[-4:]:
        if turn.role == "user":
            lines.append(turn.content if turn.content.startswith(("Result of", "The tool"))
                         else f"Request: {turn.content}")  # fmt: skip
        else:
            lines.append(f"Answer: {turn.content}")
    lines.append("Answer:")
    return "\n".join(lines) + " "
