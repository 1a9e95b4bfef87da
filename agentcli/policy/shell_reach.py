"""What a command line may run beyond the commands its parse shows (security.md §32, §33).

Deny rules match the commands the parser finds, and what their wrappers run. That is all
bash will run only when the parse is complete and every node of the tree is of a kind whose
commands all appear as commands: lists, pipelines, groups, control flow, function bodies,
substitutions, redirections, words, plain expansions. Anything else may run what no parse
shows, and is decided here by an allow-list, failing closed: a tree with errors or skipped
bytes (a command word the grammar cannot read), arithmetic on anything but numbers (bash
expands array subscripts there, and `a[$(cmd)]` runs cmd; so does an element subscript of a
compound assignment, `a=([x]=1)`, and a declaration's value it parses again as one,
`declare -a b='([$(cmd)]=1)'`), an indirect or prompt expansion
(`${!x}`, `${x@P}`), a variable that makes programs run something (`BASH_ENV=x`,
`PAGER=cmd`, `PATH=.`), a declaration that evaluates later (`declare -n`, `-i`), a node kind
this module does not know. Such a command line counts as running every program; so does one
whose commands include a program of agentcli.policy.runners (agentcli.policy.command_reach
puts the two together)."""

from __future__ import annotations

import re
from typing import Any

from agentcli.policy.runners import variable_problem
from agentcli.policy.shell_parse import CONTAINED_NODES, PLAIN_NODES, ParsedCommand, word_value

# Node kinds whose commands all appear as `command` nodes (their words may be UNKNOWN).
_TRANSPARENT = (
    PLAIN_NODES
    | CONTAINED_NODES
    | {
        "ansi_c_string",
        "translated_string",
        "simple_expansion",
        "variable_name",
        "special_variable_name",
        "subshell",
        "if_statement",
        "elif_clause",
        "else_clause",
        "for_statement",
        "while_statement",
        "do_group",
        "case_statement",
        "case_item",
        "negated_command",
        "function_definition",
        "comment",
        "brace_expression",
        "extglob_pattern",
        "regex",
        "test_operator",
        "variable_assignments",
    }
)
_ARITHMETIC_NODES = frozenset(
    {
        "number",
        "binary_expression",
        "unary_expression",
        "parenthesized_expression",
        "ternary_expression",
        "postfix_expression",
    }
)
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_NAME_TESTS = frozenset({"-v", "-R"})
_SAFE_TRANSFORMS = frozenset({"Q", "E", "A", "K", "a", "k", "u", "U", "L"})
_NUMBER_VARIABLES = frozenset({"#", "?", "$", "!"})
_ARITHMETIC = "arithmetic on a variable can run commands (through array subscripts)"
_SUBSCRIPT = "an array subscript is arithmetic, which can run commands"
# `[0]=x` or `[12]+=x`: the one element subscript bash cannot evaluate into a command.
_LITERAL_ELEMENT = re.compile(r"\[[0-9]+\]\+?=")


def line_hidden(parsed: ParsedCommand) -> str | None:
    """The shell's part: why the parse may not show every command bash would run."""
    if parsed.unreadable:
        return f"{parsed.unreadable[0]}, so it may run any program"
    if parsed.root is None:
        return None
    return _node(parsed.root)


def _node(node: Any) -> str | None:
    kind = node.type
    if not node.is_named:
        return None
    check = _CHECKS.get(kind)
    if check is not None:
        reason = check(node)
        if reason is not None:
            return reason
    elif kind not in _TRANSPARENT:
        return f"it uses `{kind}`, which may run what agentcli cannot see"
    return _children(node)


def _children(node: Any) -> str | None:
    for child in node.children:
        reason = _node(child)
        if reason is not None:
            return reason
    return None


def _text(node: Any) -> str:
    return node.text.decode("utf-8", errors="replace")


def _literal_arithmetic(node: Any) -> bool:
    """Only numbers and operators: nothing whose value bash evaluates again."""
    if not node.is_named:
        return True
    return node.type in _ARITHMETIC_NODES and all(map(_literal_arithmetic, node.children))


def _arithmetic(node: Any) -> str | None:
    inner = [c for c in node.children if c.is_named]
    return None if all(map(_literal_arithmetic, inner)) else _ARITHMETIC


def _compound(node: Any) -> str | None:
    if node.children and node.children[0].type == "((":
        return _arithmetic(node)
    return None


def _subscript(node: Any) -> str | None:
    index = [c for c in node.children[1:] if c.type not in ("[", "]")]
    if all(c.type == "number" or _text(c) in ("@", "*") for c in index):
        return None
    return _SUBSCRIPT


def _array(node: Any) -> str | None:
    """`a=([k]=v)`: bash evaluates each element's subscript `k` as arithmetic (a bare name
    is a variable, whose value may hold `b[$(cmd)]`), so only literal integers are safe.
    The grammar does not parse these subscripts: an element that starts with `[` once its
    quotes are gone is judged by its text, failing closed."""
    for element in node.children:
        if not element.is_named:
            continue
        text = _text(element)
        bare = text.replace("'", "").replace('"', "").replace("\\", "")
        if bare.startswith("[") and not _LITERAL_ELEMENT.match(text):
            return _SUBSCRIPT
    return None


def _assignment(node: Any) -> str | None:
    target = node.children[0] if node.children else None
    if target is None:
        return None
    if target.type == "subscript":
        name = target.children[0]
        return _subscript(target) or variable_problem(_text(name))
    return variable_problem(_text(target))


def _declaration(node: Any) -> str | None:
    keyword = node.children[0].type if node.children else "declare"
    for child in node.children[1:]:
        if child.type == "variable_assignment":
            reason = _declared_value(keyword, child)
            if reason is not None:
                return reason
            continue  # the name is checked as an assignment
        if child.type == "variable_name":
            continue  # a bare name changes no value
        if child.type in ("word", "string", "raw_string", "concatenation", "number"):
            text = _text(child).strip("'\"")
            if text[:1] in "-+":
                if any(c in "ni" for c in text[1:]):
                    return f"`{keyword} {text}` evaluates names or arithmetic later"
                continue
            name, eq, _ = text.partition("=")
            if "[" in text or "=(" in text:
                return f"`{keyword}` expands the subscript in {text!r}, which can run"
            problem = variable_problem(name) if eq else None
            if problem:
                return problem
            continue
        return f"`{keyword}` with names decided only when it runs"
    return None


def _declared_value(keyword: str, node: Any) -> str | None:
    """`declare -a b='([$(cmd)]=1)'`, `declare -a b=$x`: a declaration parses a value that
    looks like `(...)` again as a compound assignment when the name is an array, which
    this line may have made it anywhere. A literal value may have neither `(` nor `[`;
    one decided only when it runs may be anything. An unquoted `(...)` is an `array`
    node, checked as one."""
    value = node.children[-1] if len(node.children) > 2 else None
    if value is None or value.type == "array":
        return None
    literal = word_value(value)
    if literal is None:
        return f"`{keyword}` may evaluate a value decided only when it runs as an array"
    if literal.startswith("(") or "[" in literal:
        return f"`{keyword}` evaluates the subscripts in {literal!r}, which can run"
    return None


def _unset(node: Any) -> str | None:
    for child in node.children[1:]:
        if child.type not in ("word", "variable_name", "raw_string", "string"):
            return "`unset` with names decided only when it runs"
        if "[" in _text(child):
            return f"`unset` expands the subscript in {_text(child)!r}, which can run"
    return None


def _expansion(node: Any) -> str | None:
    children = node.children
    if len(children) > 1 and children[1].type == "!":
        return "an indirect expansion (${!name}) can run commands through a subscript"
    subject_seen = after_colon = False
    for position, child in enumerate(children):
        if child.type == "@" and position + 1 < len(children):
            if children[position + 1].type not in _SAFE_TRANSFORMS:
                return "a prompt expansion (${name@P}) runs the commands in a value"
        elif child.type == ":":
            after_colon = True
        elif child.type == "variable_name":
            if subject_seen:
                return _ARITHMETIC  # ${x:i}: an offset is arithmetic
            subject_seen = True
        elif child.type == "subscript":
            subject_seen = True
            reason = _subscript(child)
            if reason:
                return reason
        elif after_colon and child.is_named and child.type != "number":
            return _ARITHMETIC
    return None


def _test(node: Any) -> str | None:
    """`[[ $x -eq 1 ]]` evaluates $x as arithmetic; `-v 'a[$(cmd)]'` expands a subscript."""
    double = bool(node.children) and node.children[0].type == "[["
    return _test_expression(node, double)


def _test_expression(node: Any, double: bool) -> str | None:
    for child in node.children:
        if child.type in ("binary_expression", "unary_expression", "parenthesized_expression"):
            operators = {_text(c) for c in child.children if c.type == "test_operator"}
            operands = [c for c in child.children if c.is_named and c.type != "test_operator"]
            arithmetic = double and operators & _ARITHMETIC_TESTS
            if arithmetic and not all(map(_number_operand, operands)):
                return _ARITHMETIC
            if operators & _NAME_TESTS and any("[" in _text(c) for c in operands):
                return "`-v` expands the subscript of the name it tests, which can run"
            reason = _test_expression(child, double)
            if reason:
                return reason
    return None


def _number_operand(node: Any) -> bool:
    if node.type == "number":
        return True
    if node.type == "simple_expansion":
        names = [c for c in node.children if c.is_named]
        return (
            len(names) == 1
            and names[0].type == "special_variable_name"
            and (_text(names[0]) in _NUMBER_VARIABLES)
        )
    return False


_CHECKS = {
    "arithmetic_expansion": _arithmetic,
    "c_style_for_statement": _arithmetic,
    "compound_statement": _compound,
    "subscript": _subscript,
    "array": _array,
    "variable_assignment": _assignment,
    "declaration_command": _declaration,
    "unset_command": _unset,
    "expansion": _expansion,
    "test_command": _test,
    "binary_expression": lambda node: None,
    "unary_expression": lambda node: None,
    "parenthesized_expression": lambda node: None,
    "ternary_expression": lambda node: None,
    "postfix_expression": lambda node: None,
}
