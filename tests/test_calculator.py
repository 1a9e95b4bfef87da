"""The calculator: exact arithmetic with a safe evaluator (no eval), both directions — what it
computes and what it refuses — its output as a tool, and a Hypothesis property against
Python's own integer arithmetic."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import time
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli.risk import Risk
from agentcli.tools.arithmetic import MAX_RESULT_DIGITS, calculate, describe
from agentcli.tools.base import ToolContext, ToolFailure, ToolOutput
from agentcli.tools.calculator import Calculator
from agentcli.workspace.root import Workspace
from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer


def shown(expression: str) -> str:
    return describe(calculate(expression))


def refused(expression: str) -> str:
    with pytest.raises(ToolFailure) as failure:
        calculate(expression)
    return str(failure.value)


def full_digits(value: int) -> str:
    """str() of any int, whatever Python's conversion limit (restored before returning)."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return str(value)
    finally:
        sys.set_int_max_str_digits(old)


def run_tool(expression: str) -> ToolOutput:
    ctx = ToolContext(workspace=Workspace("."))
    return asyncio.run(Calculator().execute({"expression": expression}, ctx))


# --- what it computes ------------------------------------------------------------------


def test_huge_integers_are_exact() -> None:
    assert calculate("2**1000") == 2**1000
    assert shown("2**1000") == f"{2**1000}\n(302 digits)"
    assert calculate("factorial(100)") == math.factorial(100)
    assert shown("factorial(100)") == f"{math.factorial(100)}\n(158 digits)"
    product = 12345678901234567890 * 98765432109876543210
    assert shown("12345678901234567890 * 98765432109876543210") == str(product)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # fractions, exactly
        ("1/3", "1/3 ≈ 0.3333333333333333"),
        ("2/6", "1/3 ≈ 0.3333333333333333"),
        ("1/7", "1/7 ≈ 0.14285714285714285"),
        ("-1/3", "-1/3 ≈ -0.3333333333333333"),
        ("1/3 * 3", "1"),
        ("(1/3)**2", "1/9 ≈ 0.1111111111111111"),
        ("3/4", "0.75"),
        ("-3/4", "-0.75"),
        # decimals, exactly
        ("0.1 + 0.2", "0.3"),
        ("0.1 * 3", "0.3"),
        ("1 - 0.9", "0.1"),
        ("0.1**2", "0.01"),
        ("1.5e3", "1500"),
        ("2.50 * 4", "10"),
        # operators
        ("2**10", "1024"),
        ("2^10", "1024"),
        ("2**3**2", "512"),
        ("-2**2", "-4"),
        ("(-2)**2", "4"),
        ("2**-2", "0.25"),
        ("10**-3", "0.001"),
        ("7 % 3", "1"),
        ("-7 % 3", "2"),
        ("7.5 % 2", "1.5"),
        ("7 // 2", "3"),
        ("-7 // 2", "-4"),
        ("-(3)", "-3"),
        ("+5", "5"),
        ("--5", "5"),
        ("(1 + 2) * 3", "9"),
        ("1 + 2 * 3", "7"),
        ("((((1))))", "1"),
        ("1_000_000 + 1", "1000001"),
        ("6 × 7", "42"),
        ("84 ÷ 2", "42"),
        # functions
        ("sqrt(16)", "4"),
        ("sqrt(10**40)", f"{10**20}"),
        ("sqrt(1/4)", "0.5"),
        ("sqrt(0.25)", "0.5"),
        ("sqrt(2)", repr(math.sqrt(2))),
        ("abs(-5)", "5"),
        ("abs(-1/3)", "1/3 ≈ 0.3333333333333333"),
        ("log(100, 10)", "2.0"),
        ("log(8, 2)", "3.0"),
        ("log(e)", "1.0"),
        ("ln(1)", "0.0"),
        ("log10(1000)", "3.0"),
        ("log2(1024)", "10.0"),
        ("exp(0)", "1.0"),
        ("sin(0)", "0.0"),
        ("sin(pi/2)", "1.0"),
        ("cos(0)", "1.0"),
        ("degrees(pi)", "180.0"),
        ("gcd(12, 18)", "6"),
        ("lcm(4, 6)", "12"),
        ("gcd(2**100, 6**50)", str(2**50)),
        ("round(3.14159, 2)", "3.14"),
        ("round(2.7)", "3"),
        ("round(1/3, 3)", "0.333"),
        ("floor(7/2)", "3"),
        ("ceil(7/2)", "4"),
        ("floor(-0.5)", "-1"),
        ("ceil(-0.5)", "0"),
        ("min(3, 1, 2)", "1"),
        ("max(3, 1, 2)", "3"),
        ("max(1/3, 0.3)", "1/3 ≈ 0.3333333333333333"),
        ("factorial(5)", "120"),
        # constants
        ("pi", repr(math.pi)),
        ("e", repr(math.e)),
        ("tau", repr(math.tau)),
        ("2 * pi", repr(2 * math.pi)),
    ],
)
def test_computes(expression: str, expected: str) -> None:
    assert shown(expression) == expected


def test_exact_types() -> None:
    assert calculate("1/3") == Fraction(1, 3)
    assert calculate("0.1 + 0.2") == Fraction(3, 10)
    assert isinstance(calculate("2**100"), int)
    assert isinstance(calculate("sqrt(16)"), int)


# --- what it refuses --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "needle"),
    [
        ("1/0", "division by zero"),
        ("1/(2-2)", "division by zero"),
        ("1.5/0.0", "division by zero"),
        ("1//0", "division by zero"),
        ("1 % 0", "division by zero"),
        ("5 % 0.0", "division by zero"),
        ("0**-1", "division by zero"),
        ("foo", "unknown name 'foo'"),
        ("x + 1", "unknown name 'x'"),
        ("__builtins__", "unknown name '__builtins__'"),
        ("foo(1)", "unknown function 'foo'"),
        ("__import__('os')", "unknown function '__import__'"),
        ("open('/etc/passwd')", "unknown function 'open'"),
        ("eval('1')", "unknown function 'eval'"),
        ("exec('1')", "unknown function 'exec'"),
        ("__import__('os').system('echo hi')", "not something the calculator evaluates"),
        ("(1).real", "not something the calculator evaluates"),
        ("().__class__.__bases__", "not something the calculator evaluates"),
        ("sqrt.__globals__", "not something the calculator evaluates"),
        ("lambda: 1", "not something the calculator evaluates"),
        ("(lambda x: x)(1)", "not something the calculator evaluates"),
        ("[x for x in (1, 2)]", "not something the calculator evaluates"),
        ("sum(x for x in (1, 2))", "unknown function 'sum'"),
        ("[sqrt][0](4)", "not something the calculator evaluates"),
        ("min(*[1, 2])", "not something the calculator evaluates"),
        ("round(x=1)", "not something the calculator evaluates"),
        ("1 if 1 else 2", "not something the calculator evaluates"),
        ("1 < 2", "not something the calculator evaluates"),
        ("not 1", "not something the calculator evaluates"),
        ("~1", "not something the calculator evaluates"),
        ("1 << 100", "not something the calculator evaluates"),
        ("1 & 1", "not something the calculator evaluates"),
        ("'abc'", "is not a number"),
        ("'1' + 1", "is not a number"),
        ("b'1'", "is not a number"),
        ("True", "True is not a number"),
        ("False + 1", "False is not a number"),
        ("factorial(True)", "True is not a number"),
        ("None", "is not a number"),
        ("1j", "is not a number"),
        ("1 +", "cannot read the expression"),
        ("x = 1", "cannot read the expression"),
        ("1; 2", "cannot read the expression"),
        ("import os", "cannot read the expression"),
        ("100!", "cannot read the expression"),
        ("", "cannot read the expression"),
        ("(" * 250 + "1" + ")" * 250, "cannot read the expression"),
        ("sqrt(-1)", "not real"),
        ("(-8)**(1/3)", "not a real number"),
        ("factorial(-1)", "not negative"),
        ("factorial(2.5)", "whole number"),
        ("gcd(1.5, 2)", "whole number"),
        ("log(0)", "log:"),
        ("asin(2)", "asin:"),
        ("min()", "min:"),
        ("exp(1000)", "exp:"),
        ("1+" * 1000 + "1", "too long"),
    ],
)
def test_refuses(expression: str, needle: str) -> None:
    assert needle in refused(expression)


def test_long_expressions_under_the_length_limit_are_evaluated_or_refused_clearly() -> None:
    """Under 2,000 characters an expression is accepted; a long sum or a chain of signs must
    give its value or a ToolFailure, never a RecursionError."""
    for expression, value in [("+".join(["1"] * 990), 990), ("-" * 1000 + "1", 1)]:
        assert len(expression) < 2_000
        try:
            result = calculate(expression)
        except ToolFailure:
            continue
        except RecursionError:
            pytest.fail(f"RecursionError for a {len(expression)}-character expression")
        assert result == value


# Results past the calculator's cap (4,000 digits, under Python's int-to-str limit of 4,300)
# are clearly refused; anything within it is shown whole.
PAST_STR_LIMIT = {
    "10**4300": 10**4300,
    "2**20000": 2**20000,
    "factorial(2000)": math.factorial(2000),
    "factorial(5000)": math.factorial(5000),
}


@pytest.mark.parametrize("expression", list(PAST_STR_LIMIT))
def test_integers_past_pythons_str_limit_are_shown(expression: str) -> None:
    digits = full_digits(PAST_STR_LIMIT[expression])
    try:
        text = shown(expression)
    except ValueError as exc:
        pytest.fail(f"{expression}: ValueError: {exc}")
    except ToolFailure:
        if len(digits) <= MAX_RESULT_DIGITS:
            raise  # within the calculator's own cap: it must be shown
        return
    assert text == f"{digits}\n({len(digits):,} digits)"


@pytest.mark.parametrize("expression", ["(10**9999) * (10**9999)", "2**-9999", "1/2**9000"])
def test_big_results_by_other_paths_are_a_clear_result(expression: str) -> None:
    """A product past the cap, a 9,999-place decimal: a value or a ToolFailure, not a crash."""
    try:
        shown(expression)
    except ToolFailure:
        pass
    except ValueError as exc:
        pytest.fail(f"{expression}: ValueError: {exc}")


# --- too large: refused quickly ---------------------------------------------------------

TOO_LARGE = [
    "9**9**9",
    "10**10001",
    "2**(10**100)",
    "factorial(10**6)",
    "2.0**(10**10)",
    "0.5**(10**10)",
    "(1/3)**(10**8)",
    "(1/2)**-(10**9)",
    "(10/3)**(10**9)",
]
CHILD = """
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024**2, 1536 * 1024**2))
resource.setrlimit(resource.RLIMIT_CPU, (4, 4))
from agentcli.tools.base import ToolFailure
from agentcli.tools.arithmetic import calculate, describe
started = time.monotonic()
try:
    describe(calculate(sys.argv[1]))
    outcome = "value"
except ToolFailure as exc:
    outcome = "refused: " + str(exc)
except BaseException as exc:
    outcome = "crash: " + type(exc).__name__
print(json.dumps({"seconds": time.monotonic() - started, "outcome": outcome}))
"""
WALL_SECONDS = 4.0  # for all of them together, start included; compute must stay under 1 s


@pytest.fixture(scope="module")
def too_large_runs() -> Iterator[tuple[float, dict[str, subprocess.Popen[str]]]]:
    """Each expression in its own process, all started at once: a runaway one is killed at
    the shared deadline, not waited for, and cannot take the test process's memory."""
    started = time.monotonic()
    runs = {
        expression: subprocess.Popen(
            [sys.executable, "-c", CHILD, expression],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for expression in TOO_LARGE
    }
    yield started + WALL_SECONDS, runs
    for process in runs.values():
        if process.poll() is None:
            process.kill()
        process.communicate()


@pytest.mark.parametrize("expression", TOO_LARGE)
def test_too_large_results_are_refused_quickly(
    too_large_runs: tuple[float, dict[str, subprocess.Popen[str]]], expression: str
) -> None:
    deadline, runs = too_large_runs
    process = runs[expression]
    try:
        out, err = process.communicate(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"{expression}: still computing after {WALL_SECONDS:g} s")
    assert process.returncode == 0, f"{expression}: exit {process.returncode} {err[-300:]}"
    report = json.loads(out)
    assert report["outcome"].startswith("refused: "), (expression, report)
    assert report["seconds"] < 1.0, (expression, report)


def test_too_large_in_process_messages() -> None:
    assert refused("9**9**9") == f"the result would have more than {MAX_RESULT_DIGITS:,} digits"
    assert "digits" in refused("factorial(5001)")


# --- the tool ---------------------------------------------------------------------------


def test_tool_output_and_summary() -> None:
    out = run_tool("1/3")
    assert (out.content, out.summary, out.error) == (
        "1/3 = 1/3 ≈ 0.3333333333333333",
        "1/3 ≈ 0.3333333333333333",
        False,
    )
    out = run_tool("0.1 + 0.2")
    assert (out.content, out.summary) == ("0.1 + 0.2 = 0.3", "0.3")

    out = run_tool("2**1000")
    digits = str(2**1000)
    assert out.content == f"2**1000 = {digits}\n(302 digits)"
    assert out.summary == digits[:60]


def test_tool_errors_are_tool_failures() -> None:
    with pytest.raises(ToolFailure, match="division by zero"):
        run_tool("1/0")


def test_tool_is_low_risk_and_takes_only_an_expression() -> None:
    tool = Calculator()
    ctx = ToolContext(workspace=Workspace("."))
    assert tool.assess({"expression": "1+1"}, ctx).risk is Risk.LOW
    assert tool.parameters["required"] == ["expression"]
    assert tool.parameters["additionalProperties"] is False


def test_e2e_results_and_errors_reach_the_model(run_cli: RunCli, server: ScriptedServer) -> None:
    calls: list[dict[str, Any]] = [
        {"id": "k1", "name": "calculator", "arguments": {"expression": "2**100"}},
        {"id": "k2", "name": "calculator", "arguments": {"expression": "1/0"}},
    ]
    server.enqueue(Reply.tool_calls(calls), Reply.text(["done"]))
    result = run_cli(["run", "compute"], server=server, timeout=20)

    assert result.returncode == 0, result.stderr
    tools = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    by_id = {m["tool_call_id"]: m["content"] for m in tools}
    assert by_id["k1"] == f"2**100 = {2**100}"
    assert "division by zero" in by_id["k2"]


# --- property: agrees with Python's integer arithmetic -----------------------------------

small = st.integers(min_value=-60, max_value=60)


def _combine(parts: tuple[tuple[str, int], str, tuple[str, int]]) -> tuple[str, int]:
    (left, a), op, (right, b) = parts
    value = a + b if op == "+" else a - b if op == "-" else a * b
    return f"({left}) {op} ({right})", value


trees = st.recursive(
    small.map(lambda n: (str(n), n)),
    lambda children: st.one_of(
        st.tuples(children, st.sampled_from("+-*"), children).map(_combine),
        children.map(lambda c: (f"-({c[0]})", -c[1])),
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(trees)
def test_property_nested_integer_expressions(tree: tuple[str, int]) -> None:
    expression, value = tree
    result = calculate(expression)
    assert result == value
    assert isinstance(result, int)
    assert describe(result).split("\n")[0] == str(value)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=12),
    st.lists(st.sampled_from(["+", "-", "*", " - -", " * -"]), min_size=11, max_size=11),
)
def test_property_flat_expressions_follow_pythons_precedence(
    numbers: list[int], ops: list[str]
) -> None:
    expression = str(numbers[0])
    for number, op in zip(numbers[1:], ops, strict=False):
        expression += f"{op} {number}"
    expected = eval(compile(expression, "<generated>", "eval"), {"__builtins__": {}})
    assert calculate(expression) == expected


@settings(max_examples=200, deadline=None)
@given(st.integers(-(10**30), 10**30), st.integers(-(10**12), 10**12).filter(bool))
def test_property_division_floor_and_modulo(a: int, b: int) -> None:
    assert calculate(f"{a} // {b}") == a // b
    assert calculate(f"{a} % {b}") == a % b
    assert calculate(f"{a} / {b}") == Fraction(a, b)
    assert calculate(f"({a}) ** 2") == a**2
