"""Receiving: real deliveries of the service verified with verify_webhook, and the documented FastAPI receiver."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import time
import types
from pathlib import Path

import httpx
import pytest
from conftest import PROJECT_ROOT, Receiver, Stack

from construction_integration import Client, WebhookVerificationError, verify_webhook
from construction_integration.models import (
    EndpointTransformation,
    ShapeAEventCustomerCreated,
    ShapeBEventEmployeeCreated,
    WebhookEndpoint,
    WebhookEndpointTransformationTestResult,
)


def refusal(body: bytes | str, headers: dict[str, str], secrets: str | list[str]) -> str:
    """The code verify_webhook refuses the delivery with, or "accepted"."""
    try:
        verify_webhook(body, headers, secrets)
    except WebhookVerificationError as error:
        return error.code
    return "accepted"


def signed(secret: str, body: bytes, timestamp: int) -> dict[str, str]:
    signature = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Webhook-Timestamp": str(timestamp), "X-Webhook-Signature": signature}


def test_verifies_real_deliveries_of_both_shapes_and_refuses_forgeries_and_old_ones(stack: Stack, receiver: Receiver) -> None:
    # Changes are not delivered back to the endpoint of the key that made them: the endpoints are another key's.
    with stack.client("subscriber") as subscriber, stack.client("sender") as sender:
        verify_deliveries(stack, receiver, subscriber, sender)


def verify_deliveries(stack: Stack, receiver: Receiver, subscriber: Client, sender: Client) -> None:
    endpoint = subscriber.post("/webhook-endpoints", {"url": receiver.url("/a"), "event_types": ["customer.created"]}, model=WebhookEndpoint)
    catalog = subscriber.post("/webhook-endpoints", {"url": receiver.url("/b"), "event_types": ["employee.created"], "payload_shape": "B"}, model=WebhookEndpoint)
    assert endpoint.secret and catalog.secret
    secret = endpoint.secret

    customer = sender.post("/customers", {"name": "Delivered Inc"})
    sender.post("/employees", {"emp_number": "PY-1", "name": "Dana Py", "email": "dana.py@example.com", "employee_type": "site_worker"})
    [delivery] = receiver.received("/a", 1)
    event = verify_webhook(delivery.body, delivery.headers, secret)
    assert isinstance(event, ShapeAEventCustomerCreated)
    assert (str(event.data.id), event.data.name, str(event.company_id)) == (customer["id"], "Delivered Inc", stack.tenants["sender"].company_id)
    # Header names in any case, the body as text: the same event.
    lowered = {name.lower(): value for name, value in delivery.headers.items()}
    assert verify_webhook(delivery.body.decode(), lowered, [secret]) == event

    [catalog_delivery] = receiver.received("/b", 1)
    catalog_event = verify_webhook(catalog_delivery.body, catalog_delivery.headers, catalog.secret)
    assert isinstance(catalog_event, ShapeBEventEmployeeCreated)
    assert (catalog_event.event, catalog_event.data.emp_number, catalog_event.data.name) == ("employee.created", "PY-1", "Dana Py")

    assert refusal(delivery.body.replace(b"Delivered Inc", b"Diverted Inc"), delivery.headers, secret) == "INVALID_SIGNATURE"
    assert refusal(delivery.body, delivery.headers, "whsec_someone_else") == "INVALID_SIGNATURE"
    assert refusal(delivery.body, {"X-Webhook-Timestamp": delivery.headers["X-Webhook-Timestamp"]}, secret) == "MISSING_SIGNATURE"
    assert refusal(delivery.body, {**delivery.headers, "X-Webhook-Timestamp": "yesterday"}, secret) == "INVALID_TIMESTAMP"
    # Signed correctly with the endpoint's secret, but 301 s ago: a replay.
    assert refusal(delivery.body, signed(secret, delivery.body, int(time.time()) - 301), secret) == "TIMESTAMP_OUT_OF_TOLERANCE"
    assert refusal(b"[1, 2]", signed(secret, b"[1, 2]", int(time.time())), secret) == "INVALID_PAYLOAD"

    rotated = subscriber.post("/webhook-endpoints/{id}/rotate-secret", {"overlap_seconds": 3600}, path_params={"id": endpoint.id}, model=WebhookEndpoint)
    assert rotated.secret and rotated.secret != secret
    sender.post("/customers", {"name": "Rotated Corp"})
    [_, after_rotation] = receiver.received("/a", 2)
    # During the overlap the delivery carries a signature of each secret: either one verifies it.
    for secrets in ([secret], [rotated.secret], [rotated.secret, secret]):
        rotated_event = verify_webhook(after_rotation.body, after_rotation.headers, secrets)
        assert isinstance(rotated_event, ShapeAEventCustomerCreated) and rotated_event.data.name == "Rotated Corp"
    assert refusal(delivery.body, delivery.headers, rotated.secret) == "INVALID_SIGNATURE"

    # The delivery log, newest first, one delivery a page.
    logged = [d["id"] for d in subscriber.paginate("/webhook-deliveries", params={"endpoint_id": endpoint.id, "limit": 1})]
    assert logged == [after_rotation.headers["X-Webhook-ID"], delivery.headers["X-Webhook-ID"]]
    # The receiver closes after this test: later changes are not to be sent to it.
    for registered in (endpoint, catalog):
        subscriber.delete("/webhook-endpoints/{id}", path_params={"id": registered.id})


def receiver_example(document: str) -> str:
    """The one FastAPI receiver of a document."""
    blocks = [block for block in re.findall(r"```python\n(.*?)```", (PROJECT_ROOT / document).read_text(), re.S) if "FastAPI()" in block]
    assert len(blocks) == 1, f"{document} should hold one FastAPI receiver"
    return blocks[0]


async def post(app: object, body: bytes, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://receiver.test") as client:
        return await client.post("/hook", content=body, headers=headers)


@pytest.mark.parametrize("document", ["README.md", "docs/python-sdk.md"])
def test_the_documented_receiver_acknowledges_a_real_delivery_and_refuses_bad_ones(stack: Stack, receiver: Receiver, document: str, monkeypatch: pytest.MonkeyPatch) -> None:
    code = receiver_example(document)
    assert len(code.strip().splitlines()) <= 16, f"the receiver of {document} should stay short"
    with stack.client("subscriber") as subscriber, stack.client("sender") as sender:
        endpoint = subscriber.post("/webhook-endpoints", {"url": receiver.url("/example"), "event_types": ["customer.created"]}, model=WebhookEndpoint)
        sender.post("/customers", {"name": f"Example Ltd {Path(document).stem}"})
        [delivery] = receiver.received("/example", 1)
        subscriber.delete("/webhook-endpoints/{id}", path_params={"id": endpoint.id})
    headers = {name: value for name, value in delivery.headers.items() if name.lower().startswith("x-webhook-")}

    assert endpoint.secret
    monkeypatch.setenv("WEBHOOK_SECRET", f"whsec_new {endpoint.secret}")
    module = types.ModuleType("receiver_example")
    exec(compile(code, document, "exec"), module.__dict__)
    answer = asyncio.run(post(module.app, delivery.body, headers))
    assert (answer.status_code, answer.json()) == (200, {"received": True})
    assert asyncio.run(post(module.app, delivery.body.replace(b"Example", b"Exemplar"), headers)).status_code == 401
    old = signed(endpoint.secret, delivery.body, int(time.time()) - 600)
    assert asyncio.run(post(module.app, delivery.body, {**headers, **old})).status_code == 400


def test_saves_and_tries_a_transformation_typed_by_its_models(stack: Stack, receiver: Receiver) -> None:
    with stack.client("subscriber") as subscriber:
        transformation = EndpointTransformation(body='{"customer": data.name}', headers={"X-Source": "event_type"}, path='"/customers/" & data.id')
        endpoint = subscriber.post("/webhook-endpoints", {"url": receiver.url("/t"), "event_types": ["customer.created"], "transformation": transformation}, model=WebhookEndpoint)
        assert endpoint.transformation == transformation
        event = {"event_type": "customer.created", "data": {"id": "c-1", "name": "Shaped Inc"}}
        result = subscriber.test_transformation(endpoint.id, event=event)
        assert isinstance(result, WebhookEndpointTransformationTestResult)
        assert (result.body, result.headers, result.error) == ({"customer": "Shaped Inc"}, {"X-Source": "customer.created"}, None)
        assert result.url is not None and result.url.endswith("/customers/c-1")
        failing = subscriber.test_transformation(endpoint.id, event=event, transformation={"body": "data.name + 1"})
        assert failing.error is not None and failing.error.field == "transformation.body" and failing.error.position is not None
