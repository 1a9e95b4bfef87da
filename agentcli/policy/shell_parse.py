"""Parsing a shell command with a real bash grammar (tree-sitter-bash), failing closed.

A command is "plain" only when every node of its tree is of a kind on a short allow-list:
programs, lists and pipelines joined by `&& || ; |` (and newlines), commands, command
names, words, strings, raw strings, numbers and concatenations. Anything else —
substitutions, expansions, redirections, assignments, subshells, here-strings, `&`,
functions, tests, comments, parse errors — makes the command not plain, and whoever asks
gets the reason. Control characters are refused before parsing, since parsers and bash
disagree on them."""

from __future__ import annotations

import functools
import re
from typing import Any

from agentcli.records import dataclass, field

# Named node kinds allowed in a plain command, and the anonymous tokens allowed between them.
PLAIN_NODES = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "command",
        "command_name",
        "word",
        "string",
        "string_content",
        "raw_string",
        "number",
        "concatenation",
    }
)
PLAIN_TOKENS = frozenset({"&&", "||", ";", "|", '"', "\n"})
# Allowed as well when the command runs in a read-only OS sandbox ("contained"): feeding
# input, substituting a command's output, running in the background, and redirections
# that only discard output or copy descriptors. The commands inside are still checked,
# and a substitution's value is an UNKNOWN word the classifier must account for.
CONTAINED_NODES = frozenset(
    {
        "redirected_statement",
        "file_redirect",
        "file_descriptor",
        "heredoc_redirect",
        "heredoc_start",
        "heredoc_body",
        "heredoc_content",
        "heredoc_end",
        "herestring_redirect",
        "command_substitution",
        "process_substitution",
    }
)
CONTAINED_TOKENS = frozenset(
    {
        "&",
        "|&",
        "<<",
        "<<-",
        "<<<",
        "$(",
        ")",
        "`",
        "<(",
        ">",
        ">>",
        "&>",
        "&>>",
        ">&",
        "<&",
        ">&-",
        "<&-",
        "<",
    }
)
_DUPLICATIONS = frozenset({">&", "<&", ">&-", "<&-"})
# Argument-like nodes: bash passes them to the command even when the tree puts them
# inside a redirection (`cat <<EOF /etc/passwd`).
_WORDS = frozenset(
    {
        "word",
        "string",
        "raw_string",
        "concatenation",
        "number",
        "ansi_c_string",
        "translated_string",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
    }
)
_DISCARD = "/dev/null"
GLOB_CHARACTERS = frozenset("*?[")
UNKNOWN = "\x00unknown"  # a word whose value is decided only when the shell runs
PROCESS_FILE = "\x00unknown-fd"  # `<(cmd)`: a /dev/fd/N pipe from a command, not a file
_BRACES = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")  # {a,b} and {1..3}; a lone {} is literal
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

NODE_REASONS = {
    "command_substitution": "command substitution runs another command",
    "process_substitution": "process substitution runs another command",
    "simple_expansion": "a variable expansion is decided only when it runs",
    "expansion": "a parameter expansion is decided only when it runs",
    "arithmetic_expansion": "arithmetic expansion can run commands",
    "file_redirect": "redirection reads or writes files",
    "heredoc_redirect": "a here-document feeds input",
    "herestring_redirect": "a here-string feeds input",
    "redirected_statement": "redirection reads or writes files",
    "variable_assignment": "a variable assignment changes how programs run",
    "declaration_command": "a declaration changes the shell's state",
    "subshell": "a subshell runs commands",
    "compound_statement": "a command group runs commands",
    "function_definition": "it defines a function",
    "test_command": "a test expression",
    "if_statement": "control flow",
    "for_statement": "control flow",
    "while_statement": "control flow",
    "case_statement": "control flow",
    "comment": "a comment",
    "ansi_c_string": "an ANSI-C string",
    "translated_string": "a translated string",
    "brace_expression": "brace expansion",
    "&": "`&` starts a background process",
}


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command's words as bash would pass them. A word only the running shell can
    decide (an expansion, a substitution) is UNKNOWN: such a command is never plain, but
    deny rules still see it."""

    argv: tuple[str, ...]
    has_glob: tuple[bool, ...]  # per word: an unquoted glob the shell would expand
    braces: tuple[bool, ...] = ()  # per word: an unquoted brace expansion (`{a,b}`)

    @property
    def complete(self) -> bool:
        return UNKNOWN not in self.argv

    @property
    def program(self) -> str:
        return self.argv[0] if self.argv else ""

    def __str__(self) -> str:
        return " ".join(self.argv)


@dataclass(slots=True)
class ParsedCommand:
    """Plain: `commands` are all its simple commands and `problems` is empty. Not plain:
    `problems` says why, and `commands` holds whatever commands could still be found (for
    deny rules, which must match even inside substitutions)."""

    commands: list[SimpleCommand] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    inputs: list[tuple[str, bool]] = field(default_factory=list)  # `< FILE` (contained only)
    # Why the parse may not show everything bash would run (an error, skipped bytes...):
    # then the command line may run any program (agentcli.policy.shell_reach).
    unreadable: list[str] = field(default_factory=list)
    root: Any = None  # the tree's root node, for walks of its own (None when not parsed)

    @property
    def plain(self) -> bool:
        return not self.problems


@functools.cache
def _parser() -> Any:
    import tree_sitter

    from agentcli.adapters.bash_grammar import bash_language

    return tree_sitter.Parser(tree_sitter.Language(bash_language()))


def parse_command(command: str, *, contained: bool = False) -> ParsedCommand:
    """`contained`: the command will run in a read-only OS sandbox, so the shell forms of
    CONTAINED_NODES are allowed too (each still checked where it matters)."""
    result = ParsedCommand()
    if not command.strip():
        result.problems.append("the command is empty")
        return result
    if _CONTROL.search(command):
        return _unreadable(result, "it contains control characters")
    if "\\\n" in command:  # bash joins the lines inside a word; the parser splits them
        _unreadable(result, "a line continuation joins words in ways the parser cannot see")
    try:
        source = command.encode("utf-8")
    except UnicodeEncodeError:
        return _unreadable(result, "it contains characters that are not valid text")
    tree = _parser().parse(source)
    result.root = tree.root_node
    if tree.root_node.has_error:
        _unreadable(result, "the shell grammar cannot parse it completely")
    if _uncovered(tree.root_node, source):
        _unreadable(result, "part of it is invisible to the shell grammar")
    _walk(tree.root_node, result, contained)
    return result


def _unreadable(result: ParsedCommand, problem: str) -> ParsedCommand:
    result.problems.append(problem)
    result.unreadable.append(problem)
    return result


def _uncovered(root: Any, source: bytes) -> bool:
    """True when a non-blank byte belongs to no token: the parser skipped something bash
    will read (an escaped blank, say), so what we classify is not what would run."""
    covered = bytearray(len(source))
    stack = [root]
    while stack:
        node = stack.pop()
        if node.child_count == 0:
            covered[node.start_byte : node.end_byte] = b"\x01" * (node.end_byte - node.start_byte)
        else:
            stack.extend(node.children)
    return any(not covered[i] and source[i] not in b" \t\n" for i in range(len(source)))


def _walk(node: Any, result: ParsedCommand, contained: bool = False) -> None:
    kind = node.type
    allowed = kind in PLAIN_NODES if node.is_named else kind in PLAIN_TOKENS
    if not allowed and contained:
        allowed = kind in CONTAINED_NODES if node.is_named else kind in CONTAINED_TOKENS
        problem = _contained_problem(node, result) if allowed else None
        if problem:
            result.problems.append(problem)
    if not allowed and not (node.is_named and kind == "ERROR"):
        result.problems.append(NODE_REASONS.get(kind, f"it uses `{kind}`"))
    if kind == "concatenation" or (kind == "word" and node.parent.type != "concatenation"):
        problem = _word_problem(_unquoted_text(node)) or _glob_problem(node)
        if problem:
            result.problems.append(problem)
    if kind == "command":
        found = _simple_command(node)
        if found is not None:
            result.commands.append(found)
    for child in node.children:
        _walk(child, result, contained)


def _contained_problem(node: Any, result: ParsedCommand) -> str | None:
    """What a redirection or substitution allowed in a sandbox still may not do: write a
    file or hide words. An input file (`< FILE`) goes to `result.inputs`, for the
    classifier's path check."""
    if node.type == "process_substitution" and node.children[0].type != "<(":
        return "an output process substitution feeds another command"
    if node.type == "heredoc_redirect" and any(c.type in _WORDS for c in node.children):
        return "words after a here-document are arguments the grammar does not show"
    if node.type != "file_redirect":
        return None
    parts = [c for c in node.children if c.type != "file_descriptor"]
    operator = parts[0].type if parts else ""
    targets = parts[1:]
    if len(targets) > 1:  # `cmd >/dev/null ARG`: bash passes ARG to cmd, the tree hides it
        return "words after a redirection are arguments the grammar does not show"
    if operator in ("&>", ">&", "&>>") and targets and targets[0].type == "number":
        return None if operator == ">&" else "redirection writes a file"
    if operator in _DUPLICATIONS:
        return None if not targets or targets[0].type == "number" else "redirection writes a file"
    value = word_value(targets[0]) if targets else None
    if value == _DISCARD:
        return None
    if operator == "<" and value is not None:
        result.inputs.append((value, _has_unquoted_glob(targets[0])))
        return None
    return "redirection reads or writes files"


def _unquoted_text(node: Any) -> str:
    """The parts of a word the shell expands (quoted parts are left out)."""
    if node.type == "word":
        return node.text.decode("utf-8", errors="replace")
    return "".join(_unquoted_text(c) if c.type == "word" else "\0" for c in node.children)


def _word_problem(text: str) -> str | None:
    """Expansions bash performs on an unquoted word that tree-sitter leaves inside it."""
    unescaped = re.sub(r"\\.", "", text)
    if _BRACES.search(unescaped):
        return "brace expansion turns one word into several"
    if unescaped.startswith("~") and not re.match(r"^~(/|$)", unescaped):
        return "this form of tilde expansion is decided only when it runs"
    return None


_BASH_ONLY_GLOB = re.compile(r"\[(\^|[^\]]*\[[:=.])|[?*+@!]\(")  # [^a] [[:alpha:]] @(x)
_ESCAPED_GLOB = re.compile(r"\\[][*?]")


def _glob_problem(node: Any) -> str | None:
    """A glob the path check cannot expand as bash does: bash-only bracket forms and
    extglob, or glob characters quoted or escaped beside unquoted ones (bash takes those
    literally, Python's glob would not)."""
    if not _has_unquoted_glob(node):
        return None
    parts = node.children if node.type == "concatenation" else [node]
    raw = "".join(p.text.decode("utf-8", "replace") for p in parts if p.type == "word")
    quoted = "".join(p.text.decode("utf-8", "replace") for p in parts if p.type != "word")
    if _BASH_ONLY_GLOB.search(raw):
        return "a glob form bash expands differently from the check ([^…], [[:class:]], extglob)"
    if _ESCAPED_GLOB.search(raw) or any(c in quoted for c in "*?[]"):
        return "a glob with quoted or escaped glob characters"
    return None


def _simple_command(node: Any) -> SimpleCommand | None:
    words: list[str] = []
    globs: list[bool] = []
    braces: list[bool] = []
    for child in node.children:
        if child.type == "command_name":
            child = child.children[0] if child.children else child
        elif child.type in ("variable_assignment", "herestring_redirect", "file_redirect"):
            continue  # not arguments (a here-string is the command's input)
        if not child.is_named:
            continue
        value = word_value(child)
        words.append(UNKNOWN if value is None else value)
        globs.append(_has_unquoted_glob(child))
        braces.append(bool(_BRACES.search(re.sub(r"\\.", "", _unquoted_text(child)))))
    return SimpleCommand(tuple(words), tuple(globs), tuple(braces)) if words else None


def word_value(node: Any) -> str | None:
    """The argument bash would pass for a plain word node; None when it cannot be known."""
    text = node.text.decode("utf-8", errors="replace")
    kind = node.type
    if kind in ("word", "number"):
        return re.sub(r"\\(.)", r"\1", text)
    if kind == "raw_string":
        return text[1:-1]
    if kind == "string":
        parts = []
        for child in node.children:
            if child.type == "string_content":
                parts.append(re.sub(r'\\([$`"\\\n])', r"\1", child.text.decode("utf-8", "replace")))
            elif child.type != '"':
                return None  # an expansion inside the quotes
        return "".join(parts)
    if kind == "process_substitution" and node.parent.type == "command":
        return PROCESS_FILE
    if kind == "concatenation":
        pieces = [word_value(child) for child in node.children]
        return None if any(p is None for p in pieces) else "".join(pieces)  # type: ignore[arg-type]
    return None


def _has_unquoted_glob(node: Any) -> bool:
    if node.type == "word":
        text = node.text.decode("utf-8", errors="replace")
        unescaped = re.sub(r"\\.", "", text)
        return any(c in GLOB_CHARACTERS for c in unescaped)
    if node.type == "concatenation":
        return any(_has_unquoted_glob(child) for child in node.children)
    return False
