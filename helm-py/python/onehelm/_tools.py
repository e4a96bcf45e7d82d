"""How a Python function becomes a tool of a channel's agent: its name, its
description (the docstring) and the JSON Schema of its arguments, read from
its signature and type hints. Used by ``Channel.tool``; not public API."""

from __future__ import annotations

import enum
import inspect
import types
import typing
from collections.abc import Callable
from typing import Any

_SIMPLE: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}


def _schema(hint: Any, where: str) -> dict[str, Any]:
    if hint is inspect.Parameter.empty or hint is Any:
        return {}
    if hint in _SIMPLE:
        return dict(_SIMPLE[hint])
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        schema = _schema(args[0], where)
        notes = [a for a in args[1:] if isinstance(a, str)]
        if notes:
            schema["description"] = " ".join(notes)
        return schema
    if origin in (typing.Union, types.UnionType):
        options = [_schema(a, where) for a in args]
        return {"anyOf": options}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return {"enum": [member.value for member in hint]}
    if origin in (list, tuple, set, frozenset) or hint in (list, tuple, set, frozenset):
        schema: dict[str, Any] = {"type": "array"}
        if args and args[-1] is not Ellipsis:
            schema["items"] = _schema(args[0], where)
        elif args:
            schema["items"] = _schema(args[0], where)
        return schema
    if origin is dict or hint is dict:
        schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = _schema(args[1], where)
        return schema
    raise TypeError(
        f"{where}: cannot describe {hint!r} as JSON Schema; use str, int, float, bool, "
        "list, dict, Literal, an Enum, Optional or Annotated, or pass schema=..."
    )


def describe(func: Callable[..., Any]) -> tuple[str, str, dict[str, Any]]:
    """The tool's name, description and input schema, from ``func``."""
    name = getattr(func, "__name__", "")
    description = inspect.getdoc(func) or ""
    hints = typing.get_type_hints(func, include_extras=True)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in inspect.signature(func).parameters.values():
        where = f"tool {name}, argument {param.name}"
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(f"{where}: a tool's arguments are named; *args and **kwargs cannot be described")
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"{where}: a tool's arguments are passed by name; drop the '/'")
        schema = _schema(hints.get(param.name, inspect.Parameter.empty), where)
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        elif param.default is None or isinstance(param.default, (str, int, float, bool)):
            schema["default"] = param.default
        properties[param.name] = schema
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return name, description, schema
