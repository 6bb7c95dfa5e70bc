"""Receiving deliveries: ``verify_webhook`` and the events it returns."""

from __future__ import annotations

import hmac
import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, TypeAlias, Union, cast

from pydantic import BaseModel, ConfigDict, ValidationError

from ._signature import signature_of
from .errors import WebhookVerificationError
from .models import SHAPE_A_EVENTS, SHAPE_B_EVENTS, ShapeAEvent, ShapeBEvent

__all__ = [
    "ShapeAEvent",
    "ShapeAEventWebhookTest",
    "ShapeBEvent",
    "ShapeBEventWebhookTest",
    "UntypedShapeAEvent",
    "UntypedShapeBEvent",
    "WebhookEvent",
    "WebhookHeaders",
    "WebhookTestData",
    "parse_event",
    "verify_webhook",
]


class WebhookTestData(BaseModel):
    """What a test delivery (POST /webhook-endpoints/{id}/test, or the console's button) carries."""

    model_config = ConfigDict(extra="allow")
    message: str
    endpoint_id: str


class ShapeAEventWebhookTest(BaseModel):
    """A test delivery to a shape A endpoint: not one of the spec's events, so not in the document."""

    model_config = ConfigDict(extra="allow")
    event_id: str
    event_type: Literal["webhook.test"]
    timestamp: str
    company_id: str
    data: WebhookTestData


class ShapeBEventWebhookTest(BaseModel):
    """A test delivery to a shape B endpoint."""

    model_config = ConfigDict(extra="allow")
    event: Literal["webhook.test"]
    timestamp: str
    data: WebhookTestData


class UntypedShapeAEvent(BaseModel):
    """
    A shape A delivery this version of the client has no model for (an event newer than it, or data its model
    refuses): the envelope, with ``data`` as parsed. Signed all the same; a receiver should still acknowledge it.
    """

    model_config = ConfigDict(extra="allow")
    event_id: str
    event_type: str
    timestamp: str
    company_id: str
    data: dict[str, Any]


class UntypedShapeBEvent(BaseModel):
    """A shape B delivery this version of the client has no model for, as UntypedShapeAEvent."""

    model_config = ConfigDict(extra="allow")
    event: str
    timestamp: str
    data: dict[str, Any]


#: Any delivery: narrow it by class (``isinstance``, ``match``), or by ``event_type`` (shape A) or ``event`` (shape B).
WebhookEvent: TypeAlias = Union[
    ShapeAEvent,
    ShapeBEvent,
    ShapeAEventWebhookTest,
    ShapeBEventWebhookTest,
    UntypedShapeAEvent,
    UntypedShapeBEvent,
]

_SHAPE_A: dict[str, type[BaseModel]] = {**SHAPE_A_EVENTS, "webhook.test": ShapeAEventWebhookTest}
_SHAPE_B: dict[str, type[BaseModel]] = {**SHAPE_B_EVENTS, "webhook.test": ShapeBEventWebhookTest}


def parse_event(body: Mapping[str, Any]) -> WebhookEvent:
    """
    The typed event of a delivery's parsed body (or a feed event's ``body``): its model by ``event_type`` (shape A)
    or ``event`` (shape B); an Untyped event when no model takes it. Raises ValueError when it is no event at all.
    """
    untyped: type[UntypedShapeAEvent] | type[UntypedShapeBEvent]
    if isinstance(body.get("event_type"), str):
        typed, untyped = _SHAPE_A.get(body["event_type"]), UntypedShapeAEvent
    elif isinstance(body.get("event"), str):
        typed, untyped = _SHAPE_B.get(body["event"]), UntypedShapeBEvent
    else:
        raise ValueError("the body names no event (neither event_type nor event)")
    if typed is not None:
        try:
            return cast(WebhookEvent, typed.model_validate(body))
        except ValidationError:
            # A newer service's data (a new value of an enum): still a delivery to acknowledge.
            pass
    return untyped.model_validate(body)


class WebhookHeaders(Protocol):
    """A request's headers: a dict, or a framework's headers object (Starlette's, Werkzeug's for Flask and Django's too)."""

    def get(self, name: str, /) -> Any: ...

    def items(self) -> Iterable[tuple[str, Any]]: ...


_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"[0-9a-f]{64}")


def _header(headers: WebhookHeaders, name: str) -> str | None:
    # Framework header objects (Starlette, Werkzeug, httpx) match any case; a plain dict is searched.
    value = headers.get(name)
    if value is None:
        wanted = name.lower()
        value = next((v for k, v in headers.items() if isinstance(k, str) and k.lower() == wanted), None)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def _signatures(headers: WebhookHeaders) -> list[str]:
    """
    Every signature a delivery carries: each ``v1=<hex>`` of X-Webhook-Signatures (one per valid secret of the
    endpoint: two while a rotation overlaps), and X-Webhook-Signature (the current secret's).
    """
    listed = [entry[3:] for entry in (_header(headers, "X-Webhook-Signatures") or "").split(" ") if entry.startswith("v1=")]
    return [s for s in [*listed, _header(headers, "X-Webhook-Signature") or ""] if _SIGNATURE.fullmatch(s)]


def verify_webhook(
    body: bytes | str,
    headers: WebhookHeaders,
    secrets: str | Sequence[str],
    *,
    tolerance_seconds: float = 300,
) -> WebhookEvent:
    """
    Checks a delivery and returns its event: X-Webhook-Timestamp within ``tolerance_seconds`` of now (300, webhooks.md
    8), and a signature of ``<timestamp>.<body>`` made with a secret, compared in constant time. Pass both secrets of
    a rotation (``[new, old]``) while it overlaps: a signature made with any of them is accepted. ``body`` is the
    body exactly as received, before any JSON parsing; ``headers`` the request's headers, names in any case.
    Raises WebhookVerificationError.
    """
    candidates = [secrets] if isinstance(secrets, str) else list(secrets)
    if not candidates or not all(isinstance(s, str) and s for s in candidates):
        raise TypeError("verify_webhook needs the endpoint secret, or a list of secrets while a rotation overlaps")
    timestamp = _header(headers, "X-Webhook-Timestamp") or ""
    if not _TIMESTAMP.fullmatch(timestamp):
        raise WebhookVerificationError("INVALID_TIMESTAMP", "X-Webhook-Timestamp must be Unix time in seconds")
    if abs(time.time() - int(timestamp)) > tolerance_seconds:
        raise WebhookVerificationError("TIMESTAMP_OUT_OF_TOLERANCE", f"X-Webhook-Timestamp is more than {tolerance_seconds:g} seconds from this clock")
    signatures = _signatures(headers)
    if not signatures:
        raise WebhookVerificationError("MISSING_SIGNATURE", "The delivery carries no X-Webhook-Signature(s)")
    raw = body.encode() if isinstance(body, str) else bytes(body)
    expected = [signature_of(secret, timestamp, raw) for secret in candidates]
    if not any(hmac.compare_digest(signature, e) for e in expected for signature in signatures):
        raise WebhookVerificationError("INVALID_SIGNATURE", "No signature matches the body with the secret(s) given")
    try:
        payload = json.loads(raw)
    except ValueError:
        raise WebhookVerificationError("INVALID_PAYLOAD", "The body is not JSON") from None
    if not isinstance(payload, dict):
        raise WebhookVerificationError("INVALID_PAYLOAD", "The body is not a JSON object")
    try:
        return parse_event(payload)
    except ValueError as error:
        raise WebhookVerificationError("INVALID_PAYLOAD", f"The body is not an event: {error}") from None
