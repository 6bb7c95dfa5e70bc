from __future__ import annotations

import hashlib
import hmac


def signature_of(secret: str, timestamp: str, raw_body: bytes) -> str:
    """
    The signature of both directions (webhooks.md 5): lowercase hex HMAC-SHA256, keyed with the secret, of
    ``<timestamp>.<raw body>``, where timestamp is the X-Webhook-Timestamp value (Unix seconds).
    """
    return hmac.new(secret.encode(), timestamp.encode() + b"." + raw_body, hashlib.sha256).hexdigest()
