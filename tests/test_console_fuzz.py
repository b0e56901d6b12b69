"""Property-based fuzzing of the console's REST API with schemathesis, from its own OpenAPI
schema, over two users' seeded memory (SQLite): every operation, valid and invalid inputs,
as mallory and as ann. No answer is a server error, every answer conforms to the schema
(status code, content type, body), and no answer to mallory's token holds anything of ann's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

import memory_plugin
from memory_plugin.server import create_app
from tests.console_seed import ANN, MALLORY, SETTINGS, TOKENS, leaks, seed_api, seed_library

pytestmark = pytest.mark.slow

EXAMPLES = 6
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def nothing_of_anns(ctx: Any, response: Any, case: Any) -> bool:
    """Mallory's answers name neither ann, her workspace or space, nor any of her strings."""
    found = leaks(response.content.decode("utf-8", "replace"))
    if found:
        raise AssertionError(f"ann's data in mallory's answer: {found}")
    return True


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The app's OpenAPI schema, with ann's and mallory's memory seeded on SQLite."""
    url = f"sqlite:///{Path(tmp_path_factory.mktemp('fuzz')) / 'memory.db'}"
    with memory_plugin.connect(url) as backend:
        seed_library(backend)
        app = create_app(
            backend.store, tokens=TOKENS, checkpointer=backend.checkpointer, settings=SETTINGS
        )
        from fastapi.testclient import TestClient

        seed_api(TestClient(app))
        yield schemathesis.openapi.from_asgi("/openapi.json", app)


def operations(schema: Any) -> list[Any]:
    """Every operation the schema describes."""
    found = [result.ok() for result in schema.get_all_operations()]
    assert len(found) >= 30, [op.label for op in found]
    return found


def negatable(operation: Any) -> bool:
    """Whether schemathesis can make invalid input for an operation: it has a query or a body,
    and no free-form path segment (any string is a valid one, and schemathesis then finds no
    invalid request to make)."""
    free = [p for p in operation.path_parameters if "enum" not in p.definition.get("schema", {})]
    return bool(operation.query or operation.body) and not free


def fuzz(operation: Any, headers: dict[str, str], mode: GenerationMode, extra: list[Any]) -> None:
    """Call one operation with generated inputs and check every answer."""

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Any) -> None:
        response = case.call(headers=headers)
        case.validate_response(response, checks=CHECKS + extra, headers=headers)

    try:
        run()
    except Exception as exc:
        exc.add_note(f"operation: {operation.label}")
        raise


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_mallory_gets_no_server_error_and_nothing_of_anns(
    schema: Any, mode: GenerationMode
) -> None:
    for operation in operations(schema):
        if mode == GenerationMode.POSITIVE or negatable(operation):
            fuzz(operation, MALLORY, mode, [nothing_of_anns])


def test_ann_gets_no_server_error_and_answers_that_conform(schema: Any) -> None:
    for operation in operations(schema):
        fuzz(operation, ANN, GenerationMode.POSITIVE, [])
