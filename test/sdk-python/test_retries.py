"""
429 and 503 sent again after Retry-After, a bounded number of times: against a scripted server on 127.0.0.1 for each
rule, and against the service, whose minute budget (60 requests) is spent for real (conftest.rate_limited_call).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from conftest import RateLimitedCall

from construction_integration import ApiError, AsyncClient, Client, RetryOptions


@dataclass
class Reply:
    status: int
    retry_after: str | None = None
    body: dict[str, Any] = field(default_factory=dict)


def error_body(code: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": code.lower(), "details": {"field": "X-API-Key", "reason": "try again later"}}}


TOO_MANY = Reply(429, "0", error_body("RATE_LIMITED"))
UNAVAILABLE = Reply(503, "0", error_body("SERVICE_UNAVAILABLE"))
CREATED = Reply(201, body={"id": "c1", "name": "Acme"})
INBOUND_OK = Reply(200, body={"success": True, "message": "ok", "event_id": "e1", "record_id": None})


@dataclass
class Sent:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class ScriptedServer:
    """Answers requests with ``replies`` in turn on 127.0.0.1, recording what it was sent."""

    def __init__(self, replies: list[Reply]) -> None:
        self.sent: list[Sent] = []
        sent, script = self.sent, iter(replies)

        class Handler(BaseHTTPRequestHandler):
            def answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                sent.append(Sent(self.command, self.path, dict(self.headers.items()), body))
                reply = next(script)
                content = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(content)))
                if reply.retry_after is not None:
                    self.send_header("Retry-After", reply.retry_after)
                self.end_headers()
                self.wfile.write(content)

            do_GET = do_POST = answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/api/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted() -> Iterator[Callable[[list[Reply]], ScriptedServer]]:
    servers: list[ScriptedServer] = []

    def start(replies: list[Reply]) -> ScriptedServer:
        servers.append(ScriptedServer(replies))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_sends_a_write_again_after_429_and_503_with_the_same_idempotency_key_and_body(scripted: Callable[[list[Reply]], ScriptedServer]) -> None:
    server = scripted([Reply(429, "1", error_body("RATE_LIMITED")), UNAVAILABLE, CREATED])
    started = time.monotonic()
    with Client(server.base_url, "cik_test") as client:
        assert client.post("/customers", {"name": "Acme"}) == {"id": "c1", "name": "Acme"}
    assert time.monotonic() - started >= 1
    assert [s.method for s in server.sent] == ["POST"] * 3
    keys = {s.headers["Idempotency-Key"] for s in server.sent}
    assert len(keys) == 1 and len(keys.pop()) == 36
    assert {s.body for s in server.sent} == {b'{"name":"Acme"}'}


def test_gives_up_after_max_retries_or_at_once_when_told_or_when_the_wait_is_too_long(scripted: Callable[[list[Reply]], ScriptedServer]) -> None:
    bounded = scripted([UNAVAILABLE, UNAVAILABLE, Reply(503, "7", error_body("SERVICE_UNAVAILABLE"))])
    with Client(bounded.base_url, "cik_test", retries=RetryOptions(max_retries=2)) as client, pytest.raises(ApiError) as exhausted:
        client.get("/customers")
    assert (exhausted.value.status, exhausted.value.code, exhausted.value.retry_after_seconds) == (503, "SERVICE_UNAVAILABLE", 7)
    assert len(bounded.sent) == 3

    opted_out = scripted([TOO_MANY])
    with Client(opted_out.base_url, "cik_test", retries=False) as client, pytest.raises(ApiError) as at_once:
        client.get("/customers")
    assert at_once.value.code == "RATE_LIMITED" and len(opted_out.sent) == 1

    # The hour's budget is used up: its Retry-After is not waited out.
    hourly = scripted([Reply(429, "1800", error_body("RATE_LIMITED"))])
    with Client(hourly.base_url, "cik_test") as client, pytest.raises(ApiError) as too_long:
        client.get("/customers")
    assert too_long.value.retry_after_seconds == 1800 and len(hourly.sent) == 1


def test_signs_each_attempt_of_an_inbound_operation_anew_and_the_async_client_retries_too(scripted: Callable[[list[Reply]], ScriptedServer]) -> None:
    server = scripted([Reply(429, "1", error_body("RATE_LIMITED")), INBOUND_OK])

    async def send() -> None:
        async with AsyncClient(server.base_url, "cik_test", signing_secret="whsec_test") as client:
            assert (await client.send_inbound("test.connection")).success

    asyncio.run(send())
    assert [s.path for s in server.sent] == ["/webhooks/inbound"] * 2
    assert len({(s.headers["X-Webhook-Timestamp"], s.headers["X-Webhook-Signature"]) for s in server.sent}) == 2
    assert len({s.headers["Idempotency-Key"] for s in server.sent}) == 1


def test_retries_a_request_the_service_refused_for_the_minute_budget_after_retry_after(rate_limited_call: tuple[threading.Thread, RateLimitedCall]) -> None:
    thread, outcome = rate_limited_call
    thread.join(timeout=90)
    assert not thread.is_alive(), "the rate-limited call did not end within 90 s"
    if outcome.error is not None:
        raise outcome.error
    assert outcome.burst == [200] * 60
    assert [status for status, _ in outcome.answered] == [429, 200]
    waited = int(outcome.answered[0][1] or "0")
    assert 1 <= waited <= 60
    assert outcome.seconds >= waited
    assert outcome.total == 0
