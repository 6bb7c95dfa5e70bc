"""The two exceptions of the client: a response that is not a success, and a delivery that is not ours."""

from __future__ import annotations

import email.utils
import re
import time
from dataclasses import dataclass
from typing import Any, Literal

import httpx

__all__ = ["ApiError", "ErrorDetails", "WebhookVerificationError", "WebhookVerificationErrorCode", "retry_after_seconds"]


@dataclass(frozen=True)
class ErrorDetails:
    """The error body's ``details``: the body field, query parameter, header or path part at fault, and why."""

    field: str | None
    reason: str


class ApiError(Exception):
    """
    A response that is not a success, with the service's error body
    ``{"error": {"code", "message", "details": {"field", "reason"}}}``: ``code`` is one of the stable upper-snake
    codes of docs/errors.md (INVALID_REQUEST, NOT_FOUND, RATE_LIMITED, ...). A response without that body (a
    proxy's 502 page) has the code UNEXPECTED_RESPONSE.
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: ErrorDetails,
        *,
        request_id: str | None = None,
        retry_after_seconds: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        #: The X-Request-Id of the response, to quote when asking about it.
        self.request_id = request_id
        #: Retry-After in seconds, on 429 (RATE_LIMITED) and 503.
        self.retry_after_seconds = retry_after_seconds

    def __repr__(self) -> str:
        return f"ApiError(status={self.status}, code={self.code!r}, message={self.message!r}, details={self.details!r})"

    @classmethod
    def from_response(cls, response: httpx.Response) -> ApiError:
        """The error of a response whose body has been read."""
        headers = {"request_id": response.headers.get("X-Request-Id"), "retry_after_seconds": retry_after_seconds(response.headers.get("Retry-After"))}
        error = _error_object(response)
        if error is not None:
            details = error.get("details")
            field = details.get("field") if isinstance(details, dict) else None
            reason = details.get("reason") if isinstance(details, dict) else None
            return cls(
                response.status_code,
                error["code"],
                error["message"],
                ErrorDetails(field if isinstance(field, str) else None, reason if isinstance(reason, str) else ""),
                **headers,
            )
        text = response.text[:200]
        return cls(
            response.status_code,
            "UNEXPECTED_RESPONSE",
            f"HTTP {response.status_code} {response.reason_phrase}".strip(),
            ErrorDetails(None, text or "the response has no error body"),
            **headers,
        )


def _error_object(response: httpx.Response) -> dict[str, Any] | None:
    try:
        body = response.json()
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str):
        return error
    return None


_DELAY_SECONDS = re.compile(r"\s*[0-9]+\s*")


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After value: delay-seconds or an HTTP date; None when absent or unreadable."""
    if value is None or not value.strip():
        return None
    if _DELAY_SECONDS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


WebhookVerificationErrorCode = Literal[
    # X-Webhook-Timestamp is missing or not Unix seconds.
    "INVALID_TIMESTAMP",
    # The timestamp is further from now than the tolerance: an old (replayed) delivery, or a clock far off.
    "TIMESTAMP_OUT_OF_TOLERANCE",
    # No X-Webhook-Signature or X-Webhook-Signatures signature.
    "MISSING_SIGNATURE",
    # No signature matches the body with any of the secrets.
    "INVALID_SIGNATURE",
    # Signed correctly, but the body is not a JSON object holding an event.
    "INVALID_PAYLOAD",
]


class WebhookVerificationError(Exception):
    """A delivery ``verify_webhook`` refused: answer it with a 4xx status and do not act on it."""

    def __init__(self, code: WebhookVerificationErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: WebhookVerificationErrorCode = code
        self.message = message
