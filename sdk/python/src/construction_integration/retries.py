"""How a 429 or 503 is sent again: after its Retry-After, a bounded number of times."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from .errors import retry_after_seconds

__all__ = ["RetryOptions"]

#: rest-api.md 7: the reference client waits 60 seconds when a 429 has no Retry-After.
_WAIT_WITHOUT_RETRY_AFTER = {429: 60.0, 503: 5.0}


@dataclass(frozen=True)
class RetryOptions:
    """
    A 429 (a rate-limit window used up) or 503 (the service briefly unavailable) is sent again after its Retry-After
    (60 s for a 429 without one, as the spec's reference client waits; 5 s for a 503, as the service asks), at most
    ``max_retries`` times, and only when the wait is at most ``max_wait_seconds``: a longer one (the hour's or day's
    budget is used up) is raised as an ApiError at once.
    """

    max_retries: int = 3
    max_wait_seconds: float = 60.0

    def wait_before_retry(self, response: httpx.Response, retries: int) -> float | None:
        """Seconds to wait before sending again, after ``retries`` retries; None when ``response`` is the answer."""
        default = _WAIT_WITHOUT_RETRY_AFTER.get(response.status_code)
        if default is None or retries >= self.max_retries:
            return None
        wait = retry_after_seconds(response.headers.get("Retry-After"))
        wait = default if wait is None else wait
        return wait if wait <= self.max_wait_seconds else None


#: ``retries=False``: every response is the answer.
NO_RETRIES = RetryOptions(max_retries=0)
