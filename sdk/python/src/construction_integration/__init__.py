"""
Typed client for the construction integration service: the REST API and inbound endpoint (Client, AsyncClient),
webhook receivers (verify_webhook) and event feeds. The models of every schema of the service's OpenAPI document
are in ``construction_integration.models``.
"""

from .client import AsyncClient, Client, SearchOperation
from .errors import ApiError, ErrorDetails, WebhookVerificationError, WebhookVerificationErrorCode
from .models import InboundResult, InboundSearchResult, WebhookFeedEvent
from .retries import RetryOptions
from .webhooks import (
    ShapeAEvent,
    ShapeAEventWebhookTest,
    ShapeBEvent,
    ShapeBEventWebhookTest,
    UntypedShapeAEvent,
    UntypedShapeBEvent,
    WebhookEvent,
    WebhookHeaders,
    WebhookTestData,
    parse_event,
    verify_webhook,
)

__all__ = [
    "ApiError",
    "AsyncClient",
    "Client",
    "ErrorDetails",
    "InboundResult",
    "InboundSearchResult",
    "RetryOptions",
    "SearchOperation",
    "ShapeAEvent",
    "ShapeAEventWebhookTest",
    "ShapeBEvent",
    "ShapeBEventWebhookTest",
    "UntypedShapeAEvent",
    "UntypedShapeBEvent",
    "WebhookEvent",
    "WebhookFeedEvent",
    "WebhookHeaders",
    "WebhookTestData",
    "WebhookVerificationError",
    "WebhookVerificationErrorCode",
    "parse_event",
    "verify_webhook",
]
