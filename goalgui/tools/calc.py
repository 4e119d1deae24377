"""`calculate`: arithmetic on numbers, read as a syntax tree (never eval), with bounds."""

from __future__ import annotations

import ast
import math
import operator

from ..engine.permissions import Action
from ..engine.tools import BaseTool, ToolEnv, ToolError, ToolSpec

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS = {name: getattr(math, name) for name in (
    "sqrt", "log", "log10", "log2", "exp", "sin", "cos", "tan", "asin", "acos", "atan", "floor", "ceil",
    "fabs", "factorial", "gcd", "hypot", "radians", "degrees")} | {"abs": abs, "round": round, "min": min,
                                                                 "max": max}
_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}
MAX_EXPONENT = 10_000
MAX_MAGNITUDE = 1e300
MAX_BITS = 1000  # an integer of 1e300 has 997 bits: nothing larger is worked out


def evaluate(expression: str) -> float | int:
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        raise ToolError("not an arithmetic expression") from None
    return _value(tree.body)


def _value(node: ast.AST):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return _bounded(node.value)
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise ToolError(f"an exponent above {MAX_EXPONENT:,} is not computed")
        if isinstance(node.op, ast.Pow) and isinstance(left, int) and isinstance(right, int) \
                and left.bit_length() * abs(right) > MAX_BITS:  # decided before it is computed
            raise ToolError("the result is too large")
        if isinstance(node.op, ast.Mult) and isinstance(left, int) and isinstance(right, int) \
                and left.bit_length() + right.bit_length() > MAX_BITS:
            raise ToolError("the result is too large")
        try:
            result = _BINARY[type(node.op)](left, right)
        except ZeroDivisionError:
            raise ToolError("division by zero") from None
        except OverflowError:
            raise ToolError("the result is too large") from None
        return _bounded(result)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS \
            and not node.keywords:
        args = [_value(a) for a in node.args]
        if node.func.id == "factorial" and (not args or args[0] > 1000):
            raise ToolError("factorial is computed up to 1000")
        try:
            return _bounded(_FUNCTIONS[node.func.id](*args))
        except (ValueError, TypeError, OverflowError) as exc:
            raise ToolError(f"{node.func.id}: {exc}") from None
    raise ToolError("only numbers, + - * / // % **, parentheses, pi, e and math functions "
                    f"({', '.join(sorted(_FUNCTIONS))}) are allowed")


def _bounded(value):
    if isinstance(value, complex):
        raise ToolError("the result is not a real number")
    if isinstance(value, float) and not math.isfinite(value):
        raise ToolError("the result is not a finite number")
    if abs(value) > MAX_MAGNITUDE:
        raise ToolError("the result is too large")
    return value


class Calculate(BaseTool):
    spec = ToolSpec("calculate", "Compute an arithmetic expression, e.g. (12.5 * 3) / 4 or sqrt(2) * pi.",
                    {"type": "object", "properties": {"expression": {"type": "string", "maxLength": 500}},
                     "required": ["expression"], "additionalProperties": False}, Action.READ)

    async def __call__(self, arguments: dict, env: ToolEnv) -> str:
        value = evaluate(arguments["expression"])
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
            return f"{arguments['expression']} = {int(value)}"
        return f"{arguments['expression']} = {value:.12g}" if isinstance(value, float) else \
            f"{arguments['expression']} = {value}"
