"""The providers' published rules for a tool's definition, one checker per provider: each
returns what a provider would refuse in a request's tools (an empty list when it would take
them), every rule cited with the page that states it.

OpenAI (function calling in strict mode, the request body's `tools`):
  FUNCTIONS  https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools
  STRICT     https://platform.openai.com/docs/guides/function-calling#strict-mode
  SCHEMAS    https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
Anthropic (the Messages API's `tools`, and tools marked `strict: true`):
  TOOLS      https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use
  LIMITS     https://docs.claude.com/en/docs/build-with-claude/structured-outputs#json-schema-limitations
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

Schema = Mapping[str, Any]

# FUNCTIONS (`name`) and TOOLS (`name`): a-z, A-Z, 0-9, underscores and dashes, 1 to 64.
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# The structural keywords and annotations both providers' schemas take (SCHEMAS and LIMITS below
# each name them among what they support).
STRUCTURE = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
}

# SCHEMAS "Supported types": String, Number, Boolean, Integer, Object, Array, Enum, anyOf
# (and null in a union, "Although all fields must be required...emulate an optional
# parameter by using a union type with null").
OPENAI_TYPES = {"string", "number", "boolean", "integer", "object", "array", "null"}
# SCHEMAS "Supported properties" (string: pattern, format; number: multipleOf, maximum,
# exclusiveMaximum, minimum, exclusiveMinimum; array: minItems, maxItems), the structural
# keywords of its examples (type, properties, required, additionalProperties, items, enum,
# const, anyOf, $ref and $defs/definitions under "Definitions are supported") and the
# annotations description and title. Anything else, `default` among it, is not on the list
# ("Some type-specific keywords are not yet supported": allOf, not, if/then/else,
# patternProperties, dependentRequired...); Azure OpenAI refuses a `default`
# (https://github.com/openai/openai-agents-python/issues/4390) and OpenAI's own SDK strips
# `default: null` before it sends a strict schema (openai/lib/_pydantic.py).
OPENAI_KEYWORDS = STRUCTURE | {
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
}
# SCHEMAS "Objects have limitations on nesting depth and size": up to 5000 object properties
# in all, up to 10 levels of nesting (100 and 5 before); "Limitations on total string size":
# names of properties and definitions, enum values and const values at most 120,000
# characters in all; "Limitations on enum size": 1000 enum values in all, and an enum of more
# than 250 strings at most 15,000 characters.
OPENAI_MAX_PROPERTIES = 5000
OPENAI_MAX_DEPTH = 10
OPENAI_MAX_STRING_SIZE = 120_000
OPENAI_MAX_ENUM_VALUES = 1000
OPENAI_LONG_ENUM = 250
OPENAI_LONG_ENUM_CHARS = 15_000

# LIMITS "JSON Schema limitations", supported: the basic types, enum (of primitives), const,
# anyOf, allOf, $ref/$defs/definitions (local), required, additionalProperties false, the
# string formats below, minItems 0 or 1; annotations description and title. Not supported:
# numerical constraints, string length constraints, array constraints beyond minItems 0/1,
# recursive schemas, external $ref. (Anthropic's SDK, anthropic/lib/_parse/_transform.py,
# moves every other keyword, `default` among them, into the description.)
ANTHROPIC_TYPES = OPENAI_TYPES
ANTHROPIC_KEYWORDS = STRUCTURE | {"allOf", "format", "minItems"}
ANTHROPIC_FORMATS = {
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
}
# LIMITS "Schema complexity limits", over all strict tools of one request: 20 strict tools,
# 24 optional parameters, 16 parameters with union types (anyOf or a list of types).
ANTHROPIC_MAX_STRICT_TOOLS = 20
ANTHROPIC_MAX_OPTIONAL = 24
ANTHROPIC_MAX_UNIONS = 16


def openai_strict_problems(tools: Sequence[Schema]) -> list[str]:
    """What OpenAI refuses in these `tools` of a request whose functions are all strict."""
    problems: list[str] = []
    for tool in tools:
        function = tool.get("function") or {}
        name = str(function.get("name", ""))
        where = f"function {name!r}"
        if tool.get("type") != "function" or not TOOL_NAME.match(name):  # FUNCTIONS
            problems.append(f"{where}: not a function named by ^[a-zA-Z0-9_-]{{1,64}}$")
        if function.get("strict") is not True:  # STRICT: "set strict: true"
            problems.append(f"{where}: strict is not true")
        parameters = function.get("parameters") or {}
        if parameters.get("type") != "object" or "anyOf" in parameters:  # SCHEMAS root
            problems.append(f"{where}: the root schema is not an object (nor may be anyOf)")
        problems += [f"{where}: {p}" for p in _openai_schema(parameters)]
    return problems


def _openai_schema(root: Schema) -> list[str]:
    problems: list[str] = []
    properties = enum_values = string_size = 0
    for path, depth, node in _nodes(root):
        problems += _unsupported(path, node, OPENAI_KEYWORDS, OPENAI_TYPES)
        if _is_object(node):
            named = list(node.get("properties") or {})
            properties += len(named)
            string_size += sum(map(len, named))
            if node.get("additionalProperties") is not False:  # SCHEMAS
                problems.append(f"{path}: additionalProperties is not false")
            if sorted(node.get("required") or []) != sorted(named):  # SCHEMAS
                problems.append(f"{path}: not every property is required")
        if depth > OPENAI_MAX_DEPTH:
            problems.append(f"{path}: nested {depth} levels deep (at most {OPENAI_MAX_DEPTH})")
        values = [*node.get("enum", ()), *(["const"] if "const" in node else [])]
        enum_values += len(node.get("enum", ()))
        string_size += sum(len(str(value)) for value in values)
        strings = [v for v in node.get("enum", ()) if isinstance(v, str)]
        if len(strings) > OPENAI_LONG_ENUM and sum(map(len, strings)) > OPENAI_LONG_ENUM_CHARS:
            problems.append(f"{path}: enum of {len(strings)} strings is too long")
    string_size += sum(map(len, root.get("$defs") or root.get("definitions") or {}))
    if properties > OPENAI_MAX_PROPERTIES:
        problems.append(f"{properties} object properties (at most {OPENAI_MAX_PROPERTIES})")
    if enum_values > OPENAI_MAX_ENUM_VALUES:
        problems.append(f"{enum_values} enum values (at most {OPENAI_MAX_ENUM_VALUES})")
    if string_size > OPENAI_MAX_STRING_SIZE:
        problems.append(f"{string_size} characters of names and values (at most 120,000)")
    return problems


def anthropic_problems(tools: Sequence[Schema]) -> list[str]:
    """What Anthropic refuses in these `tools` of a request (the strict ones held to the
    strict subset and its limits over the whole request)."""
    problems: list[str] = []
    strict = [tool for tool in tools if tool.get("strict") is True]
    for tool in tools:
        name = str(tool.get("name", ""))
        where = f"tool {name!r}"
        if not TOOL_NAME.match(name):  # TOOLS: name
            problems.append(f"{where}: not named by ^[a-zA-Z0-9_-]{{1,64}}$")
        schema = tool.get("input_schema")
        if not isinstance(schema, Mapping) or schema.get("type") != "object":  # TOOLS
            problems.append(f"{where}: input_schema is not a JSON Schema of type object")
            continue
        if not isinstance(tool.get("description", ""), str):  # TOOLS: description
            problems.append(f"{where}: description is not a string")
        if tool in strict:
            problems += [f"{where}: {p}" for p in _anthropic_strict(schema)]
    if len(strict) > ANTHROPIC_MAX_STRICT_TOOLS:  # LIMITS
        problems.append(f"{len(strict)} strict tools (at most {ANTHROPIC_MAX_STRICT_TOOLS})")
    optional = sum(len(_optional(node)) for t in strict for _, _, node in _nodes(t["input_schema"]))
    if optional > ANTHROPIC_MAX_OPTIONAL:  # LIMITS
        problems.append(f"{optional} optional parameters (at most {ANTHROPIC_MAX_OPTIONAL})")
    unions = sum(_is_union(node) for t in strict for _, _, node in _nodes(t["input_schema"]))
    if unions > ANTHROPIC_MAX_UNIONS:  # LIMITS
        problems.append(f"{unions} union-typed parameters (at most {ANTHROPIC_MAX_UNIONS})")
    return problems


def _anthropic_strict(root: Schema) -> list[str]:
    problems: list[str] = []
    for path, _, node in _nodes(root):
        problems += _unsupported(path, node, ANTHROPIC_KEYWORDS, ANTHROPIC_TYPES)
        if _is_object(node) and node.get("additionalProperties") is not False:
            problems.append(f"{path}: additionalProperties is not false")
        if "format" in node and node["format"] not in ANTHROPIC_FORMATS:
            problems.append(f"{path}: format {node['format']!r} is not supported")
        if node.get("minItems", 0) not in (0, 1):
            problems.append(f"{path}: minItems other than 0 or 1")
        if any(isinstance(value, dict | list) for value in node.get("enum", ())):
            problems.append(f"{path}: enum of values that are not primitives")
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            problems.append(f"{path}: external $ref {ref!r}")
    return problems


def _nodes(root: Schema, path: str = "$", depth: int = 0) -> Iterator[tuple[str, int, Schema]]:
    """Every schema within `root` (itself first), with its path and object nesting depth."""
    yield path, depth, root
    inner = depth + 1 if _is_object(root) else depth
    for name, sub in (root.get("properties") or {}).items():
        yield from _nodes(sub, f"{path}.{name}", inner)
    if isinstance(root.get("items"), Mapping):
        yield from _nodes(root["items"], f"{path}[]", depth)
    for key in ("anyOf", "allOf"):
        for n, sub in enumerate(root.get(key) or ()):
            yield from _nodes(sub, f"{path}.{key}[{n}]", depth)
    for key in ("$defs", "definitions"):
        for name, sub in (root.get(key) or {}).items():
            yield from _nodes(sub, f"{path}.{key}.{name}", depth)


def _is_object(node: Schema) -> bool:
    return node.get("type") == "object" or "properties" in node


def _unsupported(path: str, node: Schema, keywords: set[str], types: set[str]) -> list[str]:
    named = node.get("type")
    listed = named if isinstance(named, list) else [] if named is None else [named]
    return [f"{path}: keyword {key!r} is not supported" for key in node if key not in keywords] + [
        f"{path}: type {kind!r} is not supported" for kind in listed if kind not in types
    ]


def _optional(node: Schema) -> list[str]:
    if not _is_object(node):
        return []
    return [name for name in node.get("properties") or {} if name not in node.get("required", ())]


def _is_union(node: Schema) -> bool:
    return "anyOf" in node or isinstance(node.get("type"), list)


def takes_null(schema: Schema) -> bool:
    """Whether a property's schema accepts null (how a strict schema says "optional")."""
    named = schema.get("type")
    if named == "null" or (isinstance(named, list) and "null" in named):
        return True
    return any(takes_null(sub) for sub in schema.get("anyOf") or ())
