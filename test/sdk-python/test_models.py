"""The generated models against the OpenAPI document the running service serves: every schema, field and event."""

from __future__ import annotations

from typing import Any

import httpx
from conftest import Stack
from pydantic import BaseModel

from construction_integration.models import SCHEMAS, SHAPE_A_EVENTS, SHAPE_B_EVENTS


def served_document(stack: Stack) -> dict[str, Any]:
    document: dict[str, Any] = httpx.get(f"{stack.base_url}/openapi.json").raise_for_status().json()
    return document


def property_names(schema: dict[str, Any], schemas: dict[str, Any]) -> set[str]:
    """The properties an object schema declares, its allOf parts' included."""
    names = set(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        names |= property_names(schemas[part["$ref"].rsplit("/", 1)[1]] if "$ref" in part else part, schemas)
    return names


def test_the_models_hold_every_schema_and_every_field_of_the_served_document(stack: Stack) -> None:
    schemas = served_document(stack)["components"]["schemas"]
    assert sorted(SCHEMAS) == sorted(schemas)
    checked = 0
    for name, schema in schemas.items():
        model = SCHEMAS[name]
        declared = property_names(schema, schemas)
        if not declared:
            continue
        assert isinstance(model, type) and issubclass(model, BaseModel), f"{name} declares properties but is no model"
        fields = {field.alias or field_name for field_name, field in model.model_fields.items()}
        assert fields == declared, f"{name}: the model's fields differ from the schema's properties"
        checked += 1
    # Most schemas are objects: a generator that wrote them all as untyped aliases would pass the loop above.
    assert checked > len(schemas) / 2


def test_every_event_of_the_document_has_its_delivery_model(stack: Stack) -> None:
    webhooks = served_document(stack)["webhooks"]
    for key, webhook in webhooks.items():
        envelope = webhook["post"]["requestBody"]["content"]["application/json"]["schema"]
        data = envelope["properties"]["data"]["$ref"].rsplit("/", 1)[1]
        if "event_type" in envelope["properties"]:
            model = SHAPE_A_EVENTS[envelope["properties"]["event_type"]["const"]]
        else:
            model = SHAPE_B_EVENTS[envelope["properties"]["event"]["const"]]
        assert set(model.model_fields) == set(envelope["properties"]), key
        # Where shape A and the catalog both deliver an event in the shape A envelope, shape A's data is the model's.
        if not key.endswith("(shape B)"):
            assert model.model_fields["data"].annotation is SCHEMAS[data], key
