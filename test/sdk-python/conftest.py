"""
Fixtures of the Python SDK's tests, run by python-sdk.test.ts against the stack it started: the REST base URL, the
API keys it issued (PYSDK_TENANTS), the test certificate for HTTPS receivers, and a report of each test's outcome
(PYSDK_REPORT) that the jest file turns into one test each.
"""

from __future__ import annotations

import json
import os
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from construction_integration import AsyncClient, Client

PROJECT_ROOT = Path(__file__).resolve().parents[2]

_outcomes: dict[str, dict[str, str]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    outcome = _outcomes.setdefault(report.nodeid, {"outcome": "passed", "details": ""})
    if report.failed:
        outcome["outcome"] = "failed"
        outcome["details"] += f"[{report.when}] {report.longreprtext}\n"
    elif report.skipped and outcome["outcome"] == "passed":
        outcome["outcome"] = "skipped"
        outcome["details"] = str(report.longrepr)


def pytest_sessionfinish(session: pytest.Session) -> None:
    report = os.environ.get("PYSDK_REPORT")
    if report:
        Path(report).write_text(json.dumps(_outcomes))


@dataclass(frozen=True)
class Tenant:
    company_id: str
    key: str
    signing_secret: str


@dataclass(frozen=True)
class Stack:
    base_url: str
    """The REST base URL, ending in /api/v1."""
    tenants: dict[str, Tenant]
    tls_cert: str
    tls_key: str

    def client(self, tenant: str, **options: Any) -> Client:
        t = self.tenants[tenant]
        return Client(self.base_url, t.key, signing_secret=t.signing_secret, **options)

    def async_client(self, tenant: str, **options: Any) -> AsyncClient:
        t = self.tenants[tenant]
        return AsyncClient(self.base_url, t.key, signing_secret=t.signing_secret, **options)


@pytest.fixture(scope="session")
def stack() -> Stack:
    tenants = {name: Tenant(**fields) for name, fields in json.loads(os.environ["PYSDK_TENANTS"]).items()}
    return Stack(os.environ["PYSDK_BASE_URL"], tenants, os.environ["PYSDK_TLS_CERT"], os.environ["PYSDK_TLS_KEY"])


def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.2) -> Any:
    """Polls ``check`` until it returns something truthy, at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    """An HTTPS server on 127.0.0.1 with the test certificate (which the stack's worker trusts), recording deliveries."""

    def __init__(self, cert: str, key: str) -> None:
        self.requests: list[Received] = []
        requests = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                requests.append(Received(self.path, dict(self.headers.items()), body))
                answer = b'{"received":true}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"https://localhost:{self.server.server_address[1]}{path}"

    def received(self, path: str, count: int, timeout: float = 20) -> list[Received]:
        """The first ``count`` deliveries to ``path``, waiting for them at most ``timeout`` seconds."""

        def first() -> list[Received] | None:
            matching = [r for r in self.requests if r.path == path]
            return matching[:count] if len(matching) >= count else None

        found: list[Received] = wait_until(first, timeout, f"{count} deliveries to {path}")
        return found

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(stack: Stack) -> Iterator[Receiver]:
    server = Receiver(stack.tls_cert, stack.tls_key)
    yield server
    server.close()


class RecordedRequests:
    """An httpx event hook keeping each request's method, path, query and headers."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> None:
        self.requests.append(request)

    def queries(self, method: str = "GET") -> list[str]:
        return [str(r.url.params) for r in self.requests if r.method == method]


@dataclass
class RateLimitedCall:
    """What a call refused for the key's minute budget did: the statuses it was answered, the Retry-After, its time."""

    burst: list[int] = field(default_factory=list)
    answered: list[tuple[int, str | None]] = field(default_factory=list)
    seconds: float = 0.0
    total: int | None = None
    error: Exception | None = None


def spend_the_minute_and_retry(stack: Stack, outcome: RateLimitedCall) -> None:
    try:
        key = stack.tenants["rate_limited"].key
        # Windows are aligned to the clock's minutes: a burst begun less than 10 s before one ends could cross into
        # the next, whose count starts over.
        if 60 - time.time() % 60 < 10:
            time.sleep(60 - time.time() % 60 + 0.2)
        with httpx.Client(headers={"X-API-Key": key}) as http, ThreadPoolExecutor(max_workers=10) as pool:
            outcome.burst = list(pool.map(lambda _: http.get(f"{stack.base_url}/customers", params={"limit": 1}).status_code, range(60)))

        def record(response: httpx.Response) -> None:
            outcome.answered.append((response.status_code, response.headers.get("Retry-After")))

        started = time.monotonic()
        with Client(stack.base_url, key, http_client=httpx.Client(event_hooks={"response": [record]})) as client:
            outcome.total = client.get("/customers", params={"limit": 1})["pagination"]["total"]
        outcome.seconds = time.monotonic() - started
    except Exception as error:
        outcome.error = error


@pytest.fixture(scope="session", autouse=True)
def rate_limited_call(stack: Stack) -> Iterator[tuple[threading.Thread, RateLimitedCall]]:
    """
    Started with the first test: the wait for the minute's end (up to 60 s) passes while the other tests run, and
    test_retries.py, the last file, reads what it did.
    """
    outcome = RateLimitedCall()
    thread = threading.Thread(target=spend_the_minute_and_retry, args=(stack, outcome), daemon=True)
    thread.start()
    yield thread, outcome
