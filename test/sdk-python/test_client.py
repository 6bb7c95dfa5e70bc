"""The client against the service: REST calls and their errors, pages by cursor and by offset, inbound operations."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import datetime, timezone

import httpx
import pytest
from conftest import RecordedRequests, Stack

from construction_integration import ApiError, Client, ErrorDetails, InboundResult, InboundSearchResult
from construction_integration.models import Customer, CustomerCreate, CustomerCreatedInput

NAMES = [f"{name} Construction" for name in ["Alpha", "Bravo", "Charlie", "Delta", "Echo"]]


def test_creates_gets_updates_and_deletes_a_record_typed_by_its_model(stack: Stack) -> None:
    with stack.client("rest") as client:
        # A body as a model sends only the fields set.
        created = client.post("/customers", CustomerCreate(name="Typed Ltd", status="Active"), model=Customer)
        assert isinstance(created, Customer)
        assert (created.name, created.status) == ("Typed Ltd", "Active")
        fetched = client.get("/customers/{id}", path_params={"id": created.id})
        assert fetched["id"] == str(created.id)
        assert Customer.model_validate(fetched) == created

        updated = client.put("/customers/{id}", {"status": "Inactive", "phone": "+1 416 555 0100"}, path_params={"id": created.id}, model=Customer)
        assert (updated.id, updated.name, updated.status, updated.phone) == (created.id, "Typed Ltd", "Inactive", "+1 416 555 0100")

        # The whole response, for its headers: Location, and the rate-limit fields of every response.
        response = client.request("POST", "/customers", body={"name": "Located Ltd"})
        assert response.status_code == 201
        assert response.headers["Location"] == f"/api/v1/customers/{response.json()['id']}"
        assert int(response.headers["X-RateLimit-Limit"]) == 60

        assert client.delete("/customers/{id}", path_params={"id": created.id}) is None
        with pytest.raises(ApiError) as gone:
            client.get("/customers/{id}", path_params={"id": created.id})
        assert (gone.value.status, gone.value.code) == (404, "NOT_FOUND")
        assert gone.value.request_id


def test_raises_the_error_body_as_one_exception_type(stack: Stack) -> None:
    with stack.client("rest") as client, pytest.raises(ApiError) as invalid:
        client.post("/customers", {"name": "Acme", "email": "not an email"})
    assert (invalid.value.status, invalid.value.code, invalid.value.details.field) == (400, "INVALID_REQUEST", "email")
    assert invalid.value.details.reason
    assert "email" in invalid.value.message and "email" in str(invalid.value)

    with stack.client("read_only") as read_only, pytest.raises(ApiError) as forbidden:
        read_only.post("/customers", {"name": "Acme"})
    assert (forbidden.value.status, forbidden.value.code) == (403, "FORBIDDEN")

    with Client(stack.base_url, "cik_unknown_key") as stranger, pytest.raises(ApiError) as unauthorized:
        stranger.get("/customers")
    assert (unauthorized.value.status, unauthorized.value.code) == (401, "UNAUTHORIZED")
    assert isinstance(unauthorized.value.details, ErrorDetails)


class WithoutCursors(httpx.BaseTransport):
    """The service as it answered before cursors: pagination without next_cursor."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        response.read()
        body = json.loads(response.content)
        del body["pagination"]["next_cursor"]
        return httpx.Response(response.status_code, json=body, request=request)


def test_walks_pages_by_cursor_and_by_offset(stack: Stack) -> None:
    recorded = RecordedRequests()
    with stack.client("paging", http_client=httpx.Client(event_hooks={"request": [recorded]})) as client:
        for name in NAMES:
            client.post("/customers", {"name": name})

        recorded.requests.clear()
        assert [c["name"] for c in client.paginate("/customers", params={"limit": 2})] == NAMES
        # Keyset: each page after the one before by pagination.next_cursor.
        queries = recorded.queries()
        assert queries[0] == "limit=2" and len(queries) == 3
        assert all(q.startswith("limit=2&after=") for q in queries[1:])

        recorded.requests.clear()
        typed = list(client.paginate("/customers", params={"limit": 2, "offset": 1}, model=Customer))
        assert [c.name for c in typed] == NAMES[1:]
        assert recorded.queries()[0] == "limit=2&offset=1"
        assert all(q.startswith("limit=2&after=") for q in recorded.queries()[1:])

    # From a service older than cursors: page after page by offset.
    recorded.requests.clear()
    older = httpx.Client(transport=WithoutCursors(), event_hooks={"request": [recorded]})
    with stack.client("paging", http_client=older) as client:
        assert [c["name"] for c in client.paginate("/customers", params={"limit": 2})] == NAMES
    older.close()
    assert recorded.queries() == ["limit=2", "limit=2&offset=2", "limit=2&offset=4"]

    async def walk() -> list[str]:
        async with stack.async_client("paging") as client:
            return [c.name async for c in client.paginate("/customers", params={"limit": 3}, model=Customer)]

    assert asyncio.run(walk()) == NAMES


def test_sends_inbound_operations_signed_with_an_idempotency_key(stack: Stack) -> None:
    recorded = RecordedRequests()
    with stack.client("inbound", http_client=httpx.Client(event_hooks={"request": [recorded]})) as client:
        connection = client.send_inbound("test.connection")
        assert isinstance(connection, InboundResult) and connection.success
        sent = recorded.requests[-1]
        assert sent.url.path == "/webhooks/inbound"
        assert str(uuid.UUID(sent.headers["Idempotency-Key"])) == sent.headers["Idempotency-Key"]

        result = client.send_inbound("customer.created", CustomerCreatedInput(name="Inbound Supply Co", type="commercial"), source="python-sdk-test")
        assert result.success and result.record_id and result.event_id
        assert json.loads(recorded.requests[-1].content)["source"] == "python-sdk-test"
        customer = client.get("/customers/{id}", path_params={"id": result.record_id}, model=Customer)
        assert (customer.name, customer.type) == ("Inbound Supply Co", "commercial")

        # The same operation sent again with its key and timestamp is applied once: the first answer comes back.
        key, produced = f"import-{uuid.uuid4()}", datetime.now(timezone.utc)
        first = client.send_inbound("customer.created", {"name": "Resent Ltd"}, idempotency_key=key, timestamp=produced)
        again = client.send_inbound("customer.created", {"name": "Resent Ltd"}, idempotency_key=key, timestamp=produced)
        assert again.record_id == first.record_id
        assert recorded.requests[-1].headers["Idempotency-Key"] == key
        assert [c["id"] for c in client.paginate("/customers", params={"name": "Resent Ltd"})] == [first.record_id]

        search = client.send_inbound("project.search", {"search_term": "no such project"})
        assert isinstance(search, InboundSearchResult)
        assert (search.success, search.results, search.count) == (True, [], 0)

        with pytest.raises(ApiError) as missing:
            client.send_inbound("customer.updated", {"customer_name": "Nobody Ltd", "status": "Inactive"})
        assert (missing.value.status, missing.value.code, missing.value.details.field) == (404, "NOT_FOUND", "data.customer_name")

    with Client(stack.base_url, stack.tenants["inbound"].key, signing_secret="whsec_not_the_secret") as forger, pytest.raises(ApiError) as forged:
        forger.send_inbound("test.connection")
    assert (forged.value.status, forged.value.code) == (403, "INVALID_SIGNATURE")

    async def send() -> InboundResult:
        async with stack.async_client("inbound") as client:
            return await client.send_inbound("customer.created", {"name": "Async Inbound Ltd"})

    created = asyncio.run(send())
    with stack.client("inbound") as client:
        assert client.get("/customers/{id}", path_params={"id": created.record_id})["name"] == "Async Inbound Ltd"
