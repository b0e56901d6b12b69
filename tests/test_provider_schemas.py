"""Every memory tool the graph and the middleware can offer a model (each kind of
memory_plugin.kinds.KINDS switched on, the agent's and the journal's included) is accepted by
the providers users run, as langchain-openai and langchain-anthropic convert it: OpenAI's
function calling in strict mode and Anthropic's tool input schema (plain and strict), checked
against each provider's published rules (tests/provider_rules.py). Strict decoding sends
every argument, null for one left out: a null stands for the argument's default."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_anthropic.chat_models import convert_to_anthropic_tool
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import ToolRuntime
from langgraph.store.memory import InMemoryStore
from pydantic import BaseModel, SecretStr

from memory_plugin.base import MemoryService
from memory_plugin.kinds import KINDS
from memory_plugin.offline.demo import DemoModel
from memory_plugin.plans import Plan
from memory_plugin.prebuilt.services import build_services
from memory_plugin.settings import MemorySettings
from memory_plugin.tooling import plan_tool
from tests.provider_rules import anthropic_problems, openai_strict_problems, takes_null

EVERY_KIND_ON = MemorySettings(
    **{kind.name: True for kind in KINDS if kind.name in MemorySettings.model_fields}
)
SERVICES = build_services(
    DemoModel(), EVERY_KIND_ON, store=InMemoryStore(), environ={}, every_kind=True
)
TOOLS: list[BaseTool] = SERVICES.tools
BY_NAME = pytest.mark.parametrize("tool", TOOLS, ids=[tool.name for tool in TOOLS])


def test_every_kind_that_has_tools_is_checked() -> None:
    with_tools = {kind for kind in KINDS if kind.tools is not MemoryService.tools}
    assert set(SERVICES.owners.values()) == with_tools
    assert len({tool.name for tool in TOOLS}) == len(TOOLS) >= 9


def _optional(tool: BaseTool) -> set[str]:
    """The arguments a model may leave out (not required by the tool's own schema)."""
    schema = tool.tool_call_schema
    assert isinstance(schema, type) and issubclass(schema, BaseModel)
    return {name for name, field in schema.model_fields.items() if not field.is_required()}


@BY_NAME
def test_openai_strict_function_calling_takes_the_tool(tool: BaseTool) -> None:
    converted = convert_to_openai_tool(tool, strict=True)
    assert openai_strict_problems([converted]) == []
    properties = converted["function"]["parameters"]["properties"]
    assert all(takes_null(properties[name]) for name in _optional(tool)), properties


@BY_NAME
def test_anthropic_takes_the_tool_plain_and_strict(tool: BaseTool) -> None:
    plain = convert_to_anthropic_tool(tool)
    strict = convert_to_anthropic_tool(tool, strict=True)
    assert strict["strict"] is True and "strict" not in plain
    assert anthropic_problems([plain]) == [] and anthropic_problems([strict]) == []
    assert set(plain["input_schema"]["required"]) == set(
        plain["input_schema"]["properties"]
    ) - _optional(tool)


def test_chatopenai_binds_every_memory_tool_strict_in_one_request() -> None:
    model = ChatOpenAI(model="gpt-test", api_key=SecretStr("x"))
    sent = model.bind_tools(TOOLS, strict=True).kwargs["tools"]  # type: ignore[attr-defined]
    assert [t["function"]["name"] for t in sent] == [tool.name for tool in TOOLS]
    assert openai_strict_problems(sent) == []


def test_chatanthropic_binds_every_memory_tool_strict_in_one_request() -> None:
    model = ChatAnthropic(model_name="claude-test", api_key=SecretStr("x"))  # type: ignore[call-arg]
    sent = model.bind_tools(TOOLS, strict=True).kwargs["tools"]  # type: ignore[attr-defined]
    assert [t["name"] for t in sent] == [tool.name for tool in TOOLS]
    assert all(t["strict"] is True for t in sent)
    assert anthropic_problems(sent) == []


@BY_NAME
def test_a_null_argument_stands_for_its_default(tool: BaseTool) -> None:
    schema = tool.tool_call_schema
    assert isinstance(schema, type) and issubclass(schema, BaseModel)
    properties = schema.model_json_schema()["properties"]
    required = {
        name: properties[name].get("enum", ["x"])[0]
        for name, field in schema.model_fields.items()
        if field.is_required()
    }
    left_out = schema.model_validate(required)
    nulls = schema.model_validate({**required, **dict.fromkeys(_optional(tool))})
    assert nulls == left_out


def test_memory_store_defaults_reach_the_model_in_words() -> None:
    """The schemas name no default, so the descriptions do."""
    store = next(tool for tool in TOOLS if tool.name == "memory_store")
    for default in ("default general", "the default", "default 0.5"):
        assert default in store.description


def _limited(text: str, runtime: ToolRuntime[Any, Any], limit: int = 10) -> Plan[str]:
    yield []
    return text[:limit]


STRICT = {
    "type": "object",
    "properties": {"query": {"type": "string"}},
    "required": ["query"],
    "additionalProperties": False,
}


def _openai(name: str = "search", **parameters: Any) -> dict[str, Any]:
    schema = {**STRICT, **parameters}
    return {"type": "function", "function": {"name": name, "parameters": schema, "strict": True}}


def _anthropic(name: str = "search", **schema: Any) -> dict[str, Any]:
    return {"name": name, "input_schema": {**STRICT, **schema}, "strict": True}


def test_the_checkers_pass_a_conforming_tool() -> None:
    assert openai_strict_problems([_openai()]) == []
    assert anthropic_problems([_anthropic()]) == []


@pytest.mark.parametrize(
    ("tool", "said"),
    [
        (_openai("search memory"), "^[a-zA-Z0-9_-]{1,64}$"),
        (_openai("x" * 65), "^[a-zA-Z0-9_-]{1,64}$"),
        (_openai(type="array"), "root schema is not an object"),
        (_openai(additionalProperties=True), "additionalProperties is not false"),
        (_openai(required=[]), "not every property is required"),
        (
            _openai(properties={"query": {"type": "string", "default": "a"}}),
            "keyword 'default'",
        ),
        (_openai(properties={"query": {"allOf": [{"type": "string"}]}}), "keyword 'allOf'"),
        (
            {**_openai(), "function": {**_openai()["function"], "strict": False}},
            "strict is not true",
        ),
        (
            convert_to_openai_tool(
                StructuredTool.from_function(_limited, name="limited", description="Cut."),
                strict=True,
            ),
            "keyword 'default'",
        ),
    ],
    ids=[
        "space",
        "long-name",
        "root-array",
        "open-object",
        "optional",
        "default",
        "allOf",
        "not-strict",
        "langchain-inferred-default",
    ],
)
def test_the_openai_checker_refuses_what_openai_refuses(tool: dict[str, Any], said: str) -> None:
    problems = openai_strict_problems([tool])
    assert any(said in problem for problem in problems), problems


@pytest.mark.parametrize(
    ("tools", "said"),
    [
        ([_anthropic("search memory")], "^[a-zA-Z0-9_-]{1,64}$"),
        ([_anthropic(type="array")], "input_schema is not a JSON Schema of type object"),
        ([_anthropic(additionalProperties=True)], "additionalProperties is not false"),
        ([_anthropic(properties={"query": {"type": "integer", "minimum": 1}})], "'minimum'"),
        ([_anthropic(properties={"query": {"type": "string", "default": "a"}})], "'default'"),
        ([_anthropic(f"tool{n}") for n in range(21)], "21 strict tools"),
        (
            [
                _anthropic(f"tool{n}", properties={f"a{i}": {"type": "string"} for i in range(5)})
                for n in range(5)
            ],
            "25 optional parameters",
        ),
    ],
    ids=["space", "root-array", "open-object", "minimum", "default", "tools", "optional"],
)
def test_the_anthropic_checker_refuses_what_anthropic_refuses(
    tools: list[dict[str, Any]], said: str
) -> None:
    problems = anthropic_problems(tools)
    assert any(said in problem for problem in problems), problems


def test_a_plan_tool_takes_null_for_a_default_where_langchain_alone_would_not() -> None:
    ours = plan_tool(_limited, "Cut.", refused="", unavailable="")
    assert openai_strict_problems([convert_to_openai_tool(ours, strict=True)]) == []
    schema = ours.tool_call_schema
    assert isinstance(schema, type) and issubclass(schema, BaseModel)
    assert schema.model_validate({"text": "abc", "limit": None}).limit == 10  # type: ignore[attr-defined]
