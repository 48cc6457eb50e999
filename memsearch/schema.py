"""Arguments from outside (an agent tool's call, ReadSessionContext's) checked once, against the JSON Schema
declared for them: nulls dropped (models send them), strings stripped, an enum in any letter case, a whole
float as an int. The error says what to fix, with a "did you mean" for a misspelt name."""

from __future__ import annotations

from typing import Any, Mapping

from .errors import InvalidArgument, quoted
from .memory_file import PATH_MAX


class ToolArgumentError(InvalidArgument):
    """A tool was called with arguments that do not fit its schema."""


# What to do when a required argument is missing or empty.
_FIX = {"query": "pass one to three rare words to search for", "path": "pass the path a memory_search hit gave",
        "sessionId": "use the session id of a history search's hit"}
# Why a value is too long, where "at most N" would not say it.
_TOO_LONG = {"path": f"no memory file has a path longer than {PATH_MAX} bytes"}
_KINDS = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}


def object_schema(properties: dict, required: str) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": [required], "additionalProperties": False}


def checked(arguments: Mapping[str, Any] | None, schema: dict, tool: str,
            error: type[InvalidArgument] = ToolArgumentError) -> dict:
    """``arguments`` checked against ``schema`` (type, enum, minLength, maxLength, minimum, maximum,
    required, additionalProperties), with the defaults it declares."""
    arguments = {} if arguments is None else arguments
    if not isinstance(arguments, Mapping):
        raise error(f"{tool} arguments must be a JSON object, got {_kind(arguments)}")
    expected = schema["properties"]
    if unknown := sorted(str(k) for k in arguments if k not in expected):
        shown = ", ".join(quoted(k, 100, always=True) for k in unknown[:5])
        raise error(f"unknown argument{'s' if len(unknown) > 1 else ''} {shown}{', ...' if len(unknown) > 5 else ''}"
                    f" for {tool}{_did_you_mean(unknown[0], expected)}; expected {', '.join(expected)}")
    out = {name: rule["default"] for name, rule in expected.items() if "default" in rule}
    out.update({name: _checked_value(name, value, expected[name], error) for name, value in arguments.items()
                if value is not None})
    for name in schema["required"]:
        if name not in out:
            raise error(f"missing argument {name!r}: {_FIX.get(name, 'it is required')}")
    return out


def _checked_value(name: str, value, rule: dict, error: type[InvalidArgument]):
    if rule["type"] == "integer":
        return whole_number(value, name, rule["maximum"], error)
    if rule["type"] == "boolean":
        if not isinstance(value, bool):
            raise error(f"{name} must be true or false, got {_kind(value)}", argument=name)
        return value
    if not isinstance(value, str):
        raise error(f"{name} must be a string, got {_kind(value)}", argument=name)
    value = value.strip()  # padding is no part of a word, an id or a path
    if len(value) > rule.get("maxLength", len(value)):
        why = f": {_TOO_LONG[name]}" if name in _TOO_LONG else f" (at most {rule['maxLength']})"
        raise error(f"{name} is {len(value)} characters long{why}", argument=name)
    if len(value) < rule.get("minLength", 0):
        raise error(f"{name} is empty: {_FIX.get(name, 'leave it out to search everything')}", argument=name)
    if "enum" in rule:
        if (folded := {v.lower(): v for v in rule["enum"]}.get(value.lower())) is None:  # letter case is no typo
            raise error(f"{name} must be one of {', '.join(rule['enum'])}; got {quoted(value, 80, always=True)}",
                        argument=name)
        value = folded
    return value


def whole_number(value, name: str, most: int, error: type[InvalidArgument] = InvalidArgument) -> int:
    """``value`` as an int from 1 to ``most``, else ``error``: 5.0 is a fine JSON 5; "5" and true are not."""
    if isinstance(value, float) and value.is_integer():  # False for inf and nan
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise error(f"{name} must be a whole number from 1 to {most}, got {quoted(value, 60, always=True)}",
                    argument=name)
    return value


def _did_you_mean(name: str, expected) -> str:
    import difflib

    flat = {k.lower(): k for k in expected}  # scope_id, scopeid, ScopeId: scopeId
    found = flat.get(name.replace("_", "").replace("-", "").lower()[:100])
    found = found or next(iter(difflib.get_close_matches(name[:100], list(expected), 1, 0.6)), None)
    return f" (did you mean {found!r}?)" if found else ""


def _kind(value) -> str:
    return _KINDS.get(type(value), type(value).__name__)
