"""The calculator tool's arithmetic, exact and with no eval: the expression is parsed with
Python's `ast` and only numbers, arithmetic operators, a list of math functions and
constants are evaluated. Integers have any size; decimals are exact fractions (0.1 + 0.2 ==
0.3). Imported when the tool runs (fractions and decimal cost every startup otherwise)."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from agentcli.tools.base import ToolFailure

Number = int | Fraction | float
# Beyond this a result is refused rather than computed for minutes (and Python will not
# print integers of more than 4,300 digits).
MAX_RESULT_DIGITS = 4_000
_MAX_BITS = int(MAX_RESULT_DIGITS / 0.30103)

CONSTANTS: dict[str, Number] = {"pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf}


def _exact_int(name: str) -> Callable[[Number], int]:
    def apply(value: Number) -> int:
        if isinstance(value, float) and not value.is_integer():
            raise ToolFailure(f"{name} needs a whole number, not {value}")
        if value != int(value):
            raise ToolFailure(f"{name} needs a whole number, not {value}")
        return int(value)

    return apply


def _factorial(value: Number) -> int:
    whole = _exact_int("factorial")(value)
    if whole < 0:
        raise ToolFailure("factorial needs a number that is not negative")
    if whole > 1_500:  # 1500! has 4,115 digits
        raise ToolFailure(f"the result would have more than {MAX_RESULT_DIGITS:,} digits")
    return math.factorial(whole)


def _bounded(value: Number) -> Number:
    """Every intermediate result stays printable and quick to compute with."""
    if isinstance(value, int):
        bits = value.bit_length()
    elif isinstance(value, Fraction):
        bits = max(value.numerator.bit_length(), value.denominator.bit_length())
    else:
        return value
    if bits > _MAX_BITS:
        raise ToolFailure(f"the result would have more than {MAX_RESULT_DIGITS:,} digits")
    return value


FUNCTIONS: dict[str, Callable[..., Number]] = {
    "sqrt": lambda x: _sqrt(x),
    "abs": abs,
    "round": lambda x, n=0: (
        round(Fraction(x), int(n)) if not isinstance(x, float) else round(x, int(n))
    ),
    "floor": math.floor,
    "ceil": math.ceil,
    "exp": lambda x: math.exp(float(x)),
    "log": lambda x, base=math.e: math.log(float(x), float(base)),
    "ln": lambda x: math.log(float(x)),
    "log10": lambda x: math.log10(float(x)),
    "log2": lambda x: math.log2(float(x)),
    "sin": lambda x: math.sin(float(x)),
    "cos": lambda x: math.cos(float(x)),
    "tan": lambda x: math.tan(float(x)),
    "asin": lambda x: math.asin(float(x)),
    "acos": lambda x: math.acos(float(x)),
    "atan": lambda x: math.atan(float(x)),
    "degrees": lambda x: math.degrees(float(x)),
    "radians": lambda x: math.radians(float(x)),
    "factorial": _factorial,
    "gcd": lambda a, b: math.gcd(_exact_int("gcd")(a), _exact_int("gcd")(b)),
    "lcm": lambda a, b: math.lcm(_exact_int("lcm")(a), _exact_int("lcm")(b)),
    "min": min,
    "max": max,
}


def _sqrt(value: Number) -> Number:
    if value < 0:
        raise ToolFailure("the square root of a negative number is not real")
    if isinstance(value, int):
        root = math.isqrt(value)
        if root * root == value:
            return root
    if isinstance(value, Fraction):
        top, bottom = math.isqrt(value.numerator), math.isqrt(value.denominator)
        if top * top == value.numerator and bottom * bottom == value.denominator:
            return Fraction(top, bottom)
    return math.sqrt(value)


def _power(base: Number, exponent: Number) -> Number:
    if isinstance(exponent, Fraction) and exponent.denominator == 1:
        exponent = int(exponent)
    if isinstance(exponent, int) and not isinstance(base, float):
        exact = Fraction(base)
        size_bits = max(abs(exact.numerator).bit_length(), exact.denominator.bit_length()) - 1
        if size_bits > 0 and abs(exponent) * size_bits > _MAX_BITS:  # before computing it
            raise ToolFailure(f"the result would have more than {MAX_RESULT_DIGITS:,} digits")
        if exponent < 0:
            if base == 0:
                raise ToolFailure("division by zero (0 to a negative power)")
            return Fraction(1) / (Fraction(base) ** -exponent)
        return base**exponent
    result = float(base) ** float(exponent)
    if isinstance(result, complex):
        raise ToolFailure("the result is not a real number")
    return result


def _divide(a: Number, b: Number) -> Number:
    if b == 0:
        raise ToolFailure("division by zero")
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    return Fraction(a) / Fraction(b)


def _checked(op: Callable[[Number, Number], Number]) -> Callable[[Number, Number], Number]:
    def apply(a: Number, b: Number) -> Number:
        if b == 0:
            raise ToolFailure("division by zero")
        return op(a, b)

    return apply


BINARY: dict[type, Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: _divide,
    ast.FloorDiv: _checked(operator.floordiv),
    ast.Mod: _checked(operator.mod),
    ast.Pow: _power,
}
UNARY: dict[type, Callable[[Number], Number]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _literal(value: Any) -> Number:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolFailure(f"{value!r} is not a number")
    if isinstance(value, float):
        return Fraction(repr(value)) if math.isfinite(value) else value  # 0.1 is exactly 1/10
    return value


def _evaluate(node: ast.AST) -> Number:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant):
        return _literal(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        return _bounded(BINARY[type(node.op)](_evaluate(node.left), _evaluate(node.right)))
    if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
        return UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        raise ToolFailure(f"unknown name {node.id!r}; constants: {', '.join(CONSTANTS)}")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        function = FUNCTIONS.get(node.func.id)
        if function is None:
            raise ToolFailure(
                f"unknown function {node.func.id!r}; functions: {', '.join(FUNCTIONS)}"
            )
        try:
            return _bounded(function(*(_evaluate(arg) for arg in node.args)))
        except (TypeError, ValueError, OverflowError) as exc:
            raise ToolFailure(f"{node.func.id}: {exc}") from None
    raise ToolFailure(f"{ast.unparse(node)!r} is not something the calculator evaluates")


def calculate(expression: str) -> Number:
    text = expression.replace("^", "**").replace("×", "*").replace("÷", "/").strip()
    if len(text) > 2_000:
        raise ToolFailure("the expression is too long")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ToolFailure(f"cannot read the expression: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise ToolFailure("the expression is nested too deeply") from None
    try:
        return _evaluate(tree)
    except OverflowError:
        raise ToolFailure("the result is too large for floating point") from None
    except RecursionError:
        raise ToolFailure("the expression is nested too deeply") from None


def _finite_decimal(value: Fraction) -> str | None:
    """The exact decimal of a fraction whose denominator has no factors but 2 and 5."""
    denominator, twos, fives = value.denominator, 0, 0
    while denominator % 2 == 0:
        denominator, twos = denominator // 2, twos + 1
    while denominator % 5 == 0:
        denominator, fives = denominator // 5, fives + 1
    places = max(twos, fives)
    if denominator != 1 or places > MAX_RESULT_DIGITS:
        return None
    scaled = abs(value.numerator) * 10**places // value.denominator
    digits = str(scaled).rjust(places + 1, "0")
    sign = "-" if value < 0 else ""
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


def describe(value: Number) -> str:
    if isinstance(value, Fraction):
        if value.denominator == 1:
            value = value.numerator
        else:
            exact = _finite_decimal(value)
            if exact is not None:
                return exact
            try:
                approximately = repr(float(value))
            except OverflowError:
                approximately = "(beyond floating point)"
            return f"{value.numerator}/{value.denominator} ≈ {approximately}"
    if isinstance(value, int):
        text = str(value)
        return text if len(text) <= 60 else f"{text}\n({len(text):,} digits)"
    return repr(value)
