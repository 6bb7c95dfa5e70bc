"""The clients, sync (Client) and async (AsyncClient): REST calls, pages, inbound operations and feeds."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from datetime import date, datetime, timezone
from types import TracebackType
from typing import Any, Literal, TypeVar, Union, overload
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from ._signature import signature_of
from .errors import ApiError
from .models import EndpointTransformation, InboundResult, InboundSearchResult, WebhookEndpointTransformationTestResult, WebhookFeedEvent
from .retries import NO_RETRIES, RetryOptions

__all__ = ["AsyncClient", "Client", "SearchOperation"]

ModelT = TypeVar("ModelT", bound=BaseModel)
#: A request body: a mapping, or a generated model (only the fields that were set are sent).
Body = Union[Mapping[str, Any], BaseModel]
#: The inbound operations answered by the search response (webhooks.md 2.11).
SearchOperation = Literal["project.search", "work_order.search"]

_REST_SUFFIX = re.compile(r"/api/v1/?$")
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_PATH_PARAMETER = re.compile(r"\{(\w+)\}")
MAX_PAGE_SIZE = 100
#: A long poll's request may take its wait and this much more.
_FEED_READ_MARGIN_SECONDS = 30.0


def _json_default(value: object) -> object:
    if isinstance(value, BaseModel):
        # Only what was set: a field left out is not sent as its default or null.
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _json_bytes(body: object) -> bytes:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False, default=_json_default).encode()


def _fill(path: str, path_params: Mapping[str, object] | None) -> str:
    values = path_params or {}

    def value_of(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise ValueError(f"{path} needs the path parameter {name}")
        return quote(str(values[name]), safe="")

    return _PATH_PARAMETER.sub(value_of, path)


def _query(params: Mapping[str, Any] | None) -> dict[str, Any]:
    return {name: value for name, value in (params or {}).items() if value is not None}


def _typed(value: Any, model: type[ModelT] | None) -> Any:
    return value if model is None else model.model_validate(value)


def _advance(query: dict[str, Any], page: Mapping[str, Any]) -> bool:
    """
    Points ``query`` at the page after ``page``; False when there is none. By cursor (``after`` =
    pagination.next_cursor, or the delivery log's older next_after); from a service older than cursors, by offset.
    """
    pagination = page["pagination"]
    if "next_cursor" in pagination or "next_after" in pagination:
        cursor = pagination["next_cursor"] if "next_cursor" in pagination else pagination["next_after"]
        if cursor is None:
            return False
        query["after"] = cursor
        query.pop("offset", None)
        return True
    offset = pagination["offset"] + len(page["data"])
    if not page["data"] or offset >= pagination["total"]:
        return False
    query["offset"] = offset
    return True


def _transformation_test(event: Mapping[str, Any] | None, event_type: str | None, transformation: EndpointTransformation | Mapping[str, Any] | None) -> dict[str, Any]:
    """The body of POST /webhook-endpoints/{id}/test-transformation: the fields given."""
    body: dict[str, Any] = {}
    if event is not None:
        body["event"] = event
    if event_type is not None:
        body["event_type"] = event_type
    if transformation is not None:
        body["transformation"] = transformation
    return body


class _Core:
    """What both clients share: URLs, headers, bodies, signatures and answers, without I/O."""

    def __init__(self, base_url: str, api_key: str, signing_secret: str | None, retries: RetryOptions | Literal[False]) -> None:
        if not _REST_SUFFIX.search(base_url):
            raise ValueError(f"base_url must be the REST base URL, ending in /api/v1 (got {base_url})")
        self.rest_base_url = base_url.rstrip("/")
        self.inbound_url = _REST_SUFFIX.sub("/webhooks/inbound", base_url)
        self.api_key = api_key
        self.signing_secret = signing_secret
        self.retries = NO_RETRIES if retries is False else retries

    def rest_call(
        self,
        method: str,
        path: str,
        path_params: Mapping[str, object] | None,
        params: Mapping[str, Any] | None,
        body: Body | None,
        idempotency_key: str | None,
    ) -> dict[str, Any]:
        """The arguments of httpx's build_request for one REST call, the same for each of its attempts."""
        headers = {"X-API-Key": self.api_key, "Accept": "application/json"}
        # One key for every attempt of a write, so a retry after a lost response cannot apply it twice.
        if method.upper() in _WRITES:
            headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        content = None
        if body is not None:
            content = _json_bytes(body)
            headers["Content-Type"] = "application/json"
        return {"method": method.upper(), "url": self.rest_base_url + _fill(path, path_params), "params": _query(params), "headers": headers, "content": content}

    def inbound_call(
        self, event_type: str, data: Body | None, source: str | None, idempotency_key: str | None, timestamp: datetime | None
    ) -> Callable[[], dict[str, Any]]:
        """Each attempt of an inbound operation: the same body and Idempotency-Key, signed anew (webhooks.md 5)."""
        secret = self.signing_secret
        if not secret:
            raise ValueError("send_inbound needs signing_secret: the API key's inbound signing secret")
        produced = (timestamp or datetime.now(timezone.utc)).astimezone(timezone.utc)
        envelope: dict[str, Any] = {"event_type": event_type, "timestamp": produced.isoformat(timespec="milliseconds").replace("+00:00", "Z")}
        if source is not None:
            envelope["source"] = source
        if data is not None:
            envelope["data"] = data
        raw = _json_bytes(envelope)
        # The key makes a resend of the same bytes return the first answer instead of a 409 REPLAYED_REQUEST.
        key = idempotency_key or str(uuid.uuid4())

        def attempt() -> dict[str, Any]:
            # The service refuses a signature it has seen: each attempt gets a new timestamp and signature.
            signed_at = str(int(time.time()))
            headers = {
                "Content-Type": "application/json",
                "X-API-Key": self.api_key,
                "X-Webhook-Timestamp": signed_at,
                "X-Webhook-Signature": signature_of(secret, signed_at, raw),
                "Idempotency-Key": key,
            }
            return {"method": "POST", "url": self.inbound_url, "headers": headers, "content": raw}

        return attempt

    @staticmethod
    def answer(response: httpx.Response) -> Any:
        """The body of a success (None for 204, bytes for a file); an ApiError otherwise."""
        if not response.is_success:
            raise ApiError.from_response(response)
        if response.status_code == 204 or not response.content:
            return None
        if response.headers.get("Content-Type", "").startswith("application/json"):
            return response.json()
        return response.content

    @staticmethod
    def inbound_result(event_type: str, body: Any) -> InboundResult | InboundSearchResult:
        return InboundSearchResult.model_validate(body) if event_type.endswith(".search") else InboundResult.model_validate(body)


class Client:
    """
    The service's REST API and inbound endpoint. ``base_url`` is the REST base URL ending in ``/api/v1``; ``api_key``
    is sent as X-API-Key; ``signing_secret`` (the key's ``whsec_...``, shown once with it) signs inbound operations.
    A call answers the response body and raises ApiError otherwise. ``http_client`` is the httpx.Client to send with
    (proxies, TLS, event hooks); it is then the caller's to close.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        signing_secret: str | None = None,
        retries: RetryOptions | Literal[False] = RetryOptions(),
        http_client: httpx.Client | None = None,
        timeout: float = 60.0,
    ) -> None:
        self._core = _Core(base_url, api_key, signing_secret, retries)
        self._owns_http = http_client is None
        #: The httpx.Client underneath.
        self.http = http_client or httpx.Client(timeout=timeout)

    def close(self) -> None:
        if self._owns_http:
            self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None) -> None:
        self.close()

    def _send(self, attempt: Callable[[], dict[str, Any]], timeout: float | None = None) -> httpx.Response:
        retries = 0
        while True:
            arguments = attempt()
            request = self.http.build_request(**arguments) if timeout is None else self.http.build_request(**arguments, timeout=timeout)
            response = self.http.send(request)
            wait = self._core.retries.wait_before_retry(response, retries)
            if wait is None:
                return response
            retries += 1
            time.sleep(wait)

    def request(
        self,
        method: str,
        path: str,
        *,
        path_params: Mapping[str, object] | None = None,
        params: Mapping[str, Any] | None = None,
        body: Body | None = None,
        idempotency_key: str | None = None,
        timeout: float | None = None,
    ) -> httpx.Response:
        """
        One REST call's whole response (status, headers such as Location or the rate-limit fields), not raised when
        it is an error. Retries and the Idempotency-Key of writes apply as to the other methods.
        """
        arguments = self._core.rest_call(method, path, path_params, params, body, idempotency_key)
        return self._send(lambda: arguments, timeout)

    @overload
    def get(self, path: str, *, path_params: Mapping[str, object] | None = ..., params: Mapping[str, Any] | None = ..., model: None = ...) -> Any: ...
    @overload
    def get(self, path: str, *, path_params: Mapping[str, object] | None = ..., params: Mapping[str, Any] | None = ..., model: type[ModelT]) -> ModelT: ...
    def get(self, path: str, *, path_params: Mapping[str, object] | None = None, params: Mapping[str, Any] | None = None, model: type[ModelT] | None = None) -> Any:
        """GET ``path`` (relative to base_url, ``{name}`` filled from path_params): the body, or ``model`` of it."""
        return _typed(_Core.answer(self.request("GET", path, path_params=path_params, params=params)), model)

    @overload
    def post(self, path: str, body: Body | None = ..., *, path_params: Mapping[str, object] | None = ..., idempotency_key: str | None = ..., model: None = ...) -> Any: ...
    @overload
    def post(self, path: str, body: Body | None = ..., *, path_params: Mapping[str, object] | None = ..., idempotency_key: str | None = ..., model: type[ModelT]) -> ModelT: ...
    def post(
        self,
        path: str,
        body: Body | None = None,
        *,
        path_params: Mapping[str, object] | None = None,
        idempotency_key: str | None = None,
        model: type[ModelT] | None = None,
    ) -> Any:
        """POST ``body`` with an Idempotency-Key (a new one unless given, the same on each retry)."""
        return _typed(_Core.answer(self.request("POST", path, path_params=path_params, body=body, idempotency_key=idempotency_key)), model)

    @overload
    def put(self, path: str, body: Body, *, path_params: Mapping[str, object] | None = ..., idempotency_key: str | None = ..., model: None = ...) -> Any: ...
    @overload
    def put(self, path: str, body: Body, *, path_params: Mapping[str, object] | None = ..., idempotency_key: str | None = ..., model: type[ModelT]) -> ModelT: ...
    def put(
        self,
        path: str,
        body: Body,
        *,
        path_params: Mapping[str, object] | None = None,
        idempotency_key: str | None = None,
        model: type[ModelT] | None = None,
    ) -> Any:
        """PUT: a partial update (only the fields sent change)."""
        return _typed(_Core.answer(self.request("PUT", path, path_params=path_params, body=body, idempotency_key=idempotency_key)), model)

    def delete(self, path: str, *, path_params: Mapping[str, object] | None = None, idempotency_key: str | None = None) -> Any:
        """DELETE: None for the usual 204."""
        return _Core.answer(self.request("DELETE", path, path_params=path_params, idempotency_key=idempotency_key))

    @overload
    def paginate(self, path: str, *, path_params: Mapping[str, object] | None = ..., params: Mapping[str, Any] | None = ..., model: None = ...) -> Iterator[Any]: ...
    @overload
    def paginate(self, path: str, *, path_params: Mapping[str, object] | None = ..., params: Mapping[str, Any] | None = ..., model: type[ModelT]) -> Iterator[ModelT]: ...
    def paginate(
        self, path: str, *, path_params: Mapping[str, object] | None = None, params: Mapping[str, Any] | None = None, model: type[ModelT] | None = None
    ) -> Iterator[Any]:
        """
        Every record of a list, page after page by cursor, from the first page or from the one ``offset`` or ``after``
        in ``params`` names; pages of 100 unless ``limit`` is given. Records added or removed while paging do not shift
        the pages: each record there throughout is yielded once. (From a service older than cursors: by offset.)
        """
        query: dict[str, Any] = {"limit": MAX_PAGE_SIZE, **_query(params)}
        while True:
            page = self.get(path, path_params=path_params, params=query)
            for item in page["data"]:
                yield _typed(item, model)
            if not _advance(query, page):
                return

    # The searches, named as literals, answer the search response: the overlap with `str` is that choice.
    @overload
    def send_inbound(  # type: ignore[overload-overlap]
        self, event_type: SearchOperation, data: Body | None = ..., *, source: str | None = ..., idempotency_key: str | None = ..., timestamp: datetime | None = ...
    ) -> InboundSearchResult: ...
    @overload
    def send_inbound(self, event_type: str, data: Body | None = ..., *, source: str | None = ..., idempotency_key: str | None = ..., timestamp: datetime | None = ...) -> InboundResult: ...
    def send_inbound(
        self,
        event_type: str,
        data: Body | None = None,
        *,
        source: str | None = None,
        idempotency_key: str | None = None,
        timestamp: datetime | None = None,
    ) -> InboundResult | InboundSearchResult:
        """
        Sends an inbound operation (webhooks.md 4) to /webhooks/inbound: ``data`` in the envelope (``source`` the
        sending system's label, ``timestamp`` when it produced the operation, now by default), signed with the signing
        secret, with an Idempotency-Key (a new one unless given), the same on each retry. To send an operation again
        later, give the same key and timestamp: the service takes the same body with the same key as a resend, applies
        it once and answers it as the first time.
        """
        response = self._send(self._core.inbound_call(event_type, data, source, idempotency_key, timestamp))
        return _Core.inbound_result(event_type, _Core.answer(response))

    def test_transformation(
        self,
        endpoint_id: str,
        *,
        event: Mapping[str, Any] | None = None,
        event_type: str | None = None,
        transformation: EndpointTransformation | Mapping[str, Any] | None = None,
    ) -> WebhookEndpointTransformationTestResult:
        """
        What the endpoint would be sent (body, headers, url) for ``event`` (a body as it would be sent untransformed) or
        the company's most recent event of ``event_type``, through ``transformation`` when given (to try one before
        saving it), else the endpoint's own; or the error, with its position, that would fail the delivery.
        """
        body = _transformation_test(event, event_type, transformation)
        return self.post("/webhook-endpoints/{id}/test-transformation", body, path_params={"id": endpoint_id}, model=WebhookEndpointTransformationTestResult)

    def feed(
        self,
        endpoint_id: str,
        *,
        after: str | None = None,
        wait: int = 30,
        limit: int = 100,
        acknowledge: bool = True,
        stop: threading.Event | None = None,
    ) -> Iterator[WebhookFeedEvent]:
        """
        The events of a feed (an endpoint with ``"delivery": "feed"``), in order, without end: each read long-polls
        ``wait`` seconds, from ``after`` or else from the acknowledged cursor. What the loop processed is acknowledged
        (a page's cursor once the loop asks for what follows it; on leaving, the last event it finished), so a
        consumer started again resumes there; an event the loop left by break or an exception comes again. Setting
        ``stop`` ends it after the event being processed (a read in progress ends first, within ``wait`` seconds).
        """
        path_params = {"id": endpoint_id}
        cursor = after
        # The cursor up to which the loop is done (it asked for what follows), and the one acknowledged.
        processed: str | None = None
        acknowledged: str | None = None

        def acknowledge_processed() -> None:
            nonlocal acknowledged
            if acknowledge and processed is not None and processed != acknowledged:
                self.post("/webhook-endpoints/{id}/feed/ack", {"cursor": processed}, path_params=path_params)
                acknowledged = processed

        try:
            while stop is None or not stop.is_set():
                query = _query({"wait": wait, "limit": limit, "after": cursor})
                response = self.request("GET", "/webhook-endpoints/{id}/feed", path_params=path_params, params=query, timeout=wait + _FEED_READ_MARGIN_SECONDS)
                page = _Core.answer(response)
                for item in page["data"]:
                    yield WebhookFeedEvent.model_validate(item)
                    processed = item["cursor"]
                    if stop is not None and stop.is_set():
                        return
                # Past the events too that the feed passed over (its event types changed since they were written).
                cursor = processed = page["next_cursor"]
                acknowledge_processed()
        finally:
            acknowledge_processed()


class AsyncClient:
    """Client's asynchronous twin, on httpx.AsyncClient: the same methods, awaited; paginate and feed are async iterators."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        signing_secret: str | None = None,
        retries: RetryOptions | Literal[False] = RetryOptions(),
        http_client: httpx.AsyncClient | None = None,
        timeout: float = 60.0,
    ) -> None:
        self._core = _Core(base_url, api_key, signing_secret, retries)
        self._owns_http = http_client is None
        #: The httpx.AsyncClient underneath.
        self.http = http_client or httpx.AsyncClient(timeout=timeout)

    async def aclose(self) -> None:
        if self._owns_http:
            await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None) -> None:
        await self.aclose()

    async def _send(self, attempt: Callable[[], dict[str, Any]], timeout: float | None = None) -> httpx.Response:
        retries = 0
        while True:
            arguments = attempt()
            request = self.http.build_request(**arguments) if timeout is None else self.http.build_request(**arguments, timeout=timeout)
            response = await self.http.send(request)
            wait = self._core.retries.wait_before_retry(response, retries)
            if wait is None:
                return response
            retries += 1
            await asyncio.sleep(wait)

    async def request(
        self,
        method: str,
        path: str,
        *,
        path_params: Mapping[str, object] | None = None,
        params: Mapping[str, Any] | None = None,
        body: Body | None = None,
        idempotency_key: str | None = None,
        timeout: float | None = None,
    ) -> httpx.Response:
        """As Client.request."""
        arguments = self._core.rest_call(method, path, path_params, params, body, idempotency_key)
        return await self._send(lambda: arguments, timeout)

    @overload
    async def get(self, path: str, *, path_params: Mapping[str, object] | None = ..., params: Mapping[str, Any] | None = ..., model: None = ...) -> Any: ...
    @overload
    async def get(self, path: str, *, path_params: Mapping[str, object] | None = ..., params: Mapping[str, Any] | None = ..., model: type[ModelT]) -> ModelT: ...
    async def get(self, path: str, *, path_params: Mapping[str, object] | None = None, params: Mapping[str, Any] | None = None, model: type[ModelT] | None = None) -> Any:
        """As Client.get."""
        return _typed(_Core.answer(await self.request("GET", path, path_params=path_params, params=params)), model)

    @overload
    async def post(self, path: str, body: Body | None = ..., *, path_params: Mapping[str, object] | None = ..., idempotency_key: str | None = ..., model: None = ...) -> Any: ...
    @overload
    async def post(self, path: str, body: Body | None = ..., *, path_params: Mapping[str, object] | None = ..., idempotency_key: str | None = ..., model: type[ModelT]) -> ModelT: ...
    async def post(
        self,
        path: str,
        body: Body | None = None,
        *,
        path_params: Mapping[str, object] | None = None,
        idempotency_key: str | None = None,
        model: type[ModelT] | None = None,
    ) -> Any:
        """As Client.post."""
        return _typed(_Core.answer(await self.request("POST", path, path_params=path_params, body=body, idempotency_key=idempotency_key)), model)

    @overload
    async def put(self, path: str, body: Body, *, path_params: Mapping[str, object] | None = ..., idempotency_key: str | None = ..., model: None = ...) -> Any: ...
    @overload
    async def put(self, path: str, body: Body, *, path_params: Mapping[str, object] | None = ..., idempotency_key: str | None = ..., model: type[ModelT]) -> ModelT: ...
    async def put(
        self,
        path: str,
        body: Body,
        *,
        path_params: Mapping[str, object] | None = None,
        idempotency_key: str | None = None,
        model: type[ModelT] | None = None,
    ) -> Any:
        """As Client.put."""
        return _typed(_Core.answer(await self.request("PUT", path, path_params=path_params, body=body, idempotency_key=idempotency_key)), model)

    async def delete(self, path: str, *, path_params: Mapping[str, object] | None = None, idempotency_key: str | None = None) -> Any:
        """As Client.delete."""
        return _Core.answer(await self.request("DELETE", path, path_params=path_params, idempotency_key=idempotency_key))

    @overload
    def paginate(self, path: str, *, path_params: Mapping[str, object] | None = ..., params: Mapping[str, Any] | None = ..., model: None = ...) -> AsyncIterator[Any]: ...
    @overload
    def paginate(self, path: str, *, path_params: Mapping[str, object] | None = ..., params: Mapping[str, Any] | None = ..., model: type[ModelT]) -> AsyncIterator[ModelT]: ...
    async def paginate(
        self, path: str, *, path_params: Mapping[str, object] | None = None, params: Mapping[str, Any] | None = None, model: type[ModelT] | None = None
    ) -> AsyncIterator[Any]:
        """As Client.paginate."""
        query: dict[str, Any] = {"limit": MAX_PAGE_SIZE, **_query(params)}
        while True:
            page = await self.get(path, path_params=path_params, params=query)
            for item in page["data"]:
                yield _typed(item, model)
            if not _advance(query, page):
                return

    @overload
    async def send_inbound(  # type: ignore[overload-overlap]
        self, event_type: SearchOperation, data: Body | None = ..., *, source: str | None = ..., idempotency_key: str | None = ..., timestamp: datetime | None = ...
    ) -> InboundSearchResult: ...
    @overload
    async def send_inbound(self, event_type: str, data: Body | None = ..., *, source: str | None = ..., idempotency_key: str | None = ..., timestamp: datetime | None = ...) -> InboundResult: ...
    async def send_inbound(
        self,
        event_type: str,
        data: Body | None = None,
        *,
        source: str | None = None,
        idempotency_key: str | None = None,
        timestamp: datetime | None = None,
    ) -> InboundResult | InboundSearchResult:
        """As Client.send_inbound."""
        response = await self._send(self._core.inbound_call(event_type, data, source, idempotency_key, timestamp))
        return _Core.inbound_result(event_type, _Core.answer(response))

    async def test_transformation(
        self,
        endpoint_id: str,
        *,
        event: Mapping[str, Any] | None = None,
        event_type: str | None = None,
        transformation: EndpointTransformation | Mapping[str, Any] | None = None,
    ) -> WebhookEndpointTransformationTestResult:
        """
        What the endpoint would be sent (body, headers, url) for ``event`` (a body as it would be sent untransformed) or
        the company's most recent event of ``event_type``, through ``transformation`` when given (to try one before
        saving it), else the endpoint's own; or the error, with its position, that would fail the delivery.
        """
        body = _transformation_test(event, event_type, transformation)
        return await self.post("/webhook-endpoints/{id}/test-transformation", body, path_params={"id": endpoint_id}, model=WebhookEndpointTransformationTestResult)

    async def feed(
        self,
        endpoint_id: str,
        *,
        after: str | None = None,
        wait: int = 30,
        limit: int = 100,
        acknowledge: bool = True,
        stop: asyncio.Event | None = None,
    ) -> AsyncIterator[WebhookFeedEvent]:
        """
        As Client.feed. Leaving an ``async for`` does not close an async generator at once: to have what was processed
        acknowledged then, iterate inside ``contextlib.aclosing(client.feed(...))``.
        """
        path_params = {"id": endpoint_id}
        cursor = after
        processed: str | None = None
        acknowledged: str | None = None

        async def acknowledge_processed() -> None:
            nonlocal acknowledged
            if acknowledge and processed is not None and processed != acknowledged:
                await self.post("/webhook-endpoints/{id}/feed/ack", {"cursor": processed}, path_params=path_params)
                acknowledged = processed

        try:
            while stop is None or not stop.is_set():
                query = _query({"wait": wait, "limit": limit, "after": cursor})
                response = await self.request("GET", "/webhook-endpoints/{id}/feed", path_params=path_params, params=query, timeout=wait + _FEED_READ_MARGIN_SECONDS)
                page = _Core.answer(response)
                for item in page["data"]:
                    yield WebhookFeedEvent.model_validate(item)
                    processed = item["cursor"]
                    if stop is not None and stop.is_set():
                        return
                cursor = processed = page["next_cursor"]
                await acknowledge_processed()
        finally:
            await acknowledge_processed()
