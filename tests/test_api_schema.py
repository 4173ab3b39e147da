"""The OpenAPI document says exactly what the server does: schemathesis generates requests
from it (bounded in examples, a few seconds in all) and checks every answer against it: never
a 5xx, every refusal a JSON sentence with the security headers."""

from __future__ import annotations

import atexit
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from companion.server import create_app

schemathesis = pytest.importorskip("schemathesis")
from schemathesis import GenerationMode  # noqa: E402 - after the skip
from schemathesis.checks import negative_data_rejection, positive_data_acceptance  # noqa: E402

_DB = tempfile.TemporaryDirectory(prefix="companion-schema-")
atexit.register(_DB.cleanup)
APP = create_app(Path(_DB.name) / "schema.sqlite3", keepalive_s=0.2)
# The event stream is endless by design: tests/test_api_live.py reads it over real HTTP.
schema = schemathesis.openapi.from_wsgi("/api/openapi.json", APP).exclude(path="/api/games/{game_id}/events")

# Requests the document cannot tell from good ones, so a schema-valid one may get 4xx:
# bytes that are not a photo, faces the dice set cannot show at once (advice, a confirm), one
# roll per player, names that read the same (or a solitaire game of two), a doubt about a die
# not sent, a turn kept for an attempt other than the one being played.
CROSS_FIELD_RULES = {
    "POST /api/read", "POST /api/games/{game_id}/photos", "POST /api/games/{game_id}/frames", "POST /api/advise",
    "POST /api/games/{game_id}/held-photos",
    "POST /api/first-player", "POST /api/games", "POST /api/games/{game_id}/attempts", "POST /api/evaluate",
    "PUT /api/games/{game_id}/turn",
}


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_every_answer_is_one_the_document_gives(case):
    response = case.call()
    case.validate_response(response, excluded_checks=excluded_checks(case))
    refused_as_documented(response)


def refused_as_documented(response) -> None:
    """Never a 5xx; a refusal is a JSON sentence, with the security headers as every answer."""
    assert response.status_code < 500, response.text
    headers = {k.lower(): v for k, v in response.headers.items()}
    assert "nosniff" in str(headers.get("x-content-type-options")) and headers.get("content-security-policy")
    if response.status_code >= 400:
        error = response.json()["error"]
        assert isinstance(error, str) and error.strip()


def excluded_checks(case) -> list:
    label = f"{case.operation.method.upper()} {case.operation.path}"
    return [positive_data_acceptance] if label in CROSS_FIELD_RULES else []


# Sequences of calls that follow the document's links, so that requests reach real games,
# attempts and photos: create a game, confirm, undo, read it, delete it.
class LinkedCalls(schema.as_state_machine()):
    def validate_response(self, response, case, additional_checks=None, **kwargs):
        case.validate_response(response, additional_checks=additional_checks, excluded_checks=excluded_checks(case))
        refused_as_documented(response)


LinkedCalls.TestCase.settings = settings(max_examples=10, stateful_step_count=6, deadline=None, derandomize=True,
                                         suppress_health_check=list(HealthCheck))
TestLinkedCalls = LinkedCalls.TestCase


# Requests the document refuses (a wrong type, a bound crossed, a field missing) must be refused
# by the server too: the models that make the document are the ones that parse the request.
refusals = schemathesis.openapi.from_wsgi("/api/openapi.json", APP).include(method=["POST", "PATCH"])
refusals.config.generation.update(modes=[GenerationMode.NEGATIVE])


@refusals.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_what_the_document_refuses_the_server_refuses(case):
    response = case.call()
    case.validate_response(response, checks=[negative_data_rejection])
    refused_as_documented(response)
