"""Decorators applied after the ``def``, so that mutmut mutates decorated functions.

mutmut 3.8.1 never mutates a decorated function (but one whose only decorator is
``staticmethod`` or ``classmethod``): it copies each function it mutates, and a copy
would register a click command twice or become a second property. So every property,
context manager, cached function, pydantic validator and click command body had no
mutant at all, the file door's writers and the check-logs verdict among them.

``decorators_after`` rewrites a module's source in the mutation copy only:

    @click.command("plan")       def plan_command(...):
    @config_option         ->        ...
    def plan_command(...):       plan_command = click.command("plan")(config_option(plan_command))
        ...

Python applies decorators bottom-up to the function object, and so does the assignment:
the name ends bound to the same kind of object (``property``, ``Command``, the
validator). mutmut then sees a plain function (a lone ``staticmethod`` or
``classmethod`` stays on the ``def``, as mutmut supports it) and wraps it in its
trampoline before the decorators see it. What changes is only when the decorator
expressions are evaluated: after the body is defined instead of before, which no
decorator in the package depends on.
"""

from __future__ import annotations

import ast

import libcst as cst

KEPT = ("staticmethod", "classmethod")  # mutmut handles these alone on a def


def _kept(decorator: cst.Decorator) -> bool:
    return isinstance(decorator.decorator, cst.Name) and decorator.decorator.value in KEPT


class _DecoratorsAfter(cst.CSTTransformer):
    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef | cst.FlattenSentinel[cst.BaseStatement]:
        decorators = list(updated_node.decorators)
        # A lone staticmethod/classmethod innermost stays: mutmut wraps it correctly.
        kept = [decorators.pop()] if decorators and _kept(decorators[-1]) else []
        if not decorators:
            return updated_node
        name = updated_node.name
        applied: cst.BaseExpression = cst.Name(name.value)
        for decorator in reversed(decorators):  # the innermost first, as Python does
            applied = cst.Call(func=decorator.decorator, args=[cst.Arg(applied)])
        assignment = cst.SimpleStatementLine(
            [cst.Assign(targets=[cst.AssignTarget(cst.Name(name.value))], value=applied)]
        )
        return cst.FlattenSentinel([updated_node.with_changes(decorators=kept), assignment])


def decorators_after(source: str) -> str:
    """``source`` with every decorator mutmut would refuse applied after its ``def``."""
    return cst.parse_module(source).visit(_DecoratorsAfter()).code


def refused_by_mutmut(source: str) -> list[str]:
    """The functions of ``source`` mutmut 3.8.1 would not mutate for their decorators."""
    return [
        node.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.decorator_list
        and not (
            len(node.decorator_list) == 1
            and isinstance(node.decorator_list[0], ast.Name)
            and node.decorator_list[0].id in KEPT
        )
    ]
