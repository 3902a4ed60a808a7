"""Base class for every typed config section.

Each component declares its own section as a subclass of :class:`Section` (fields with
defaults, ranges and a ``description``); ``light_league.config`` assembles them. Unknown keys
are refused (``extra="forbid"``) and reported with their dotted path and a did-you-mean.
"""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from light_league.errors import ConfigError, did_you_mean


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_attribute_docstrings=True)


def _fields_at(model: type[Section], loc: list[str]) -> list[str]:
    """Field names of the (nested) section at ``loc`` inside ``model`` (empty if not a section)."""
    current: Any = model
    for part in loc:
        field = current.model_fields.get(part)
        ann = getattr(field, "annotation", None)
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            return []
        current = ann
    return sorted(current.model_fields)


def format_validation_error(
    exc: ValidationError, model: type[Section], *, path: str = "", source: str = ""
) -> str:
    """The first problem of ``exc`` as one line: ``[source: ]dotted.path: what is wrong[; fix]``."""
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    dotted = ".".join([*([path] if path else []), *loc])
    prefix = f"{source}: " if source else ""
    if err["type"] == "extra_forbidden":
        choices = _fields_at(model, loc[:-1])
        hint = did_you_mean(loc[-1], choices) or (f"; valid keys: {', '.join(choices)}" if choices else "")
        return f"{prefix}{dotted}: unknown key{hint}"
    value = err.get("input")
    shown = "{...}" if isinstance(value, dict) else repr(value)
    message = err["msg"].removeprefix("Value error, ").rstrip(".")
    return f"{prefix}{dotted}: {shown} is invalid: {message}"


def validate_section(model: type[Section], raw: Any, *, path: str = "", source: str = "") -> Any:
    """Validate ``raw`` into ``model``; the first problem becomes a one-line :class:`ConfigError`."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, model, path=path, source=source)) from None


def parse_override(text: str) -> tuple[list[str], Any]:
    """``a.b.c=value`` → (["a", "b", "c"], value typed by YAML rules). A value that is not valid
    YAML is the string itself; a mapping that repeats a key, or one nested hundreds of levels
    deep, is a :class:`ConfigError`."""
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like key.path=value")
    key, _, raw = text.partition("=")
    parts = key.strip().split(".")
    if not all(parts):
        raise ConfigError(f"override {text!r} has an empty key part")
    if not raw.strip():
        return parts, ""
    try:
        value = load_yaml_text(raw, f"override {key.strip()}=...")
    except ConfigError as exc:
        if "not valid YAML" in str(exc):
            return parts, raw  # a plain string that YAML cannot read
        raise
    return parts, value


class _StrictLoader(yaml.SafeLoader):
    """The safe loader, refusing a key given twice in one mapping (the second would silently win).

    Merge keys (``<<: *anchor``) work as in YAML 1.1: the mapping's own keys win over the merged
    ones, and only its own keys are checked for repeats."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # flattened by SafeLoader's construct_mapping below
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, str | int | float | bool) and key in seen:
                raise _DuplicateKey(f"key {key!r} appears twice in one mapping", key_node.start_mark)
            seen[key] = True
        return super().construct_mapping(node, deep=deep)


class _DuplicateKey(yaml.YAMLError):
    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(message)
        self.message = message
        self.problem_mark = mark


def load_yaml_text(text: str, source: str) -> Any:
    """YAML ``text`` read with the strict safe loader; what is wrong with it is one
    :class:`ConfigError` naming ``source`` (a file, or a command-line override)."""
    try:
        return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass
    except _DuplicateKey as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark is not None else "?"
        raise ConfigError(f"{source} line {line}: {exc.message}; keep one of them") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{source} is not valid YAML{where}; fix the syntax there") from None
    except RecursionError:
        raise ConfigError(
            f"{source} nests more deeply than a config can (mappings or lists inside each other hundreds "
            "of levels deep); write it flatter"
        ) from None
