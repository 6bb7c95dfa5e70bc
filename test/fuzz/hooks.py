"""Schemathesis hooks for test/fuzz/api-fuzz.test.ts: real API keys, and inbound requests signed as senders sign them.

- Authentication: each case gets a valid X-API-Key from a pool of keys of one company (round robin), so the
  run stays inside the per-key rate limits; schemathesis leaves it out where it tests a missing key.
- A POST /webhooks/inbound whose case carries X-Webhook-Timestamp and X-Webhook-Signature is sent as exact
  JSON bytes, signed with the case's key's secret over `<timestamp>.<body>`; a case without one of them (a
  missing-header check) keeps it missing.
- Path ids: about half of the generated ids are swapped for ids of records the test created, chosen from
  the generated id itself (so a seed still repeats the run), so operations on one record get past their 404.
  A path with two ids (a timesheet's entry) gets a pair that belongs together.
- Each signed inbound event_type is recorded, so the test can prove every operation was reached.
- Attachment uploads get bodies of each media type the route takes, starting as such a file starts (a PDF with
  %PDF-, …), so they get past the content check to the rest of the route.
"""

import hashlib
import hmac
import itertools
import json
import os
import threading
import time

import schemathesis
from hypothesis import strategies as st

_KEYS = json.load(open(os.environ["FUZZ_KEYS_FILE"], encoding="utf-8"))
_SECRETS = {entry["key"]: entry["secret"] for entry in _KEYS}
_NEXT_KEY = itertools.cycle(_KEYS)
_LOCK = threading.Lock()
_COVERAGE = open(os.environ["FUZZ_COVERAGE_FILE"], "a", encoding="utf-8")
_RECORD_IDS = json.load(open(os.environ["FUZZ_IDS_FILE"], encoding="utf-8"))

_FILE_STARTS = {
    "application/pdf": b"%PDF-",
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/jpeg": b"\xff\xd8\xff",
    "image/webp": b"RIFF\x00\x00\x00\x00WEBP",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": b"PK\x03\x04",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": b"PK\x03\x04",
}
for _media_type, _start in _FILE_STARTS.items():
    schemathesis.openapi.media_type(_media_type, st.binary(max_size=512).map(lambda tail, start=_start: start + tail))
for _media_type in ("text/plain", "text/csv"):
    schemathesis.openapi.media_type(_media_type, st.text(max_size=256).map(lambda text: text.encode("utf-8", "surrogatepass")))


def _header(headers, name):
    return next((value for key, value in (headers or {}).items() if key.lower() == name.lower()), None)


def _set_header(headers, name, value):
    for existing in [h for h in headers if h.lower() == name.lower()]:
        del headers[existing]
    headers[name] = value


@schemathesis.auth(refresh_interval=None)
class KeyPool:
    """The X-API-Key security scheme, with a different key of the pool for each case."""

    def get(self, case, ctx):
        with _LOCK:
            return next(_NEXT_KEY)["key"]

    def set(self, case, data, ctx):
        if case.headers is None:
            case.headers = {}
        _set_header(case.headers, "X-API-Key", data)


@schemathesis.hook
def map_path_parameters(context, path_parameters):
    pool = _RECORD_IDS.get(context.operation.path) if context.operation else None
    generated = (path_parameters or {}).get("id")
    if not pool or not isinstance(generated, str):
        return path_parameters
    choice = int(hashlib.sha256(generated.encode("utf-8", "surrogatepass")).hexdigest(), 16)
    if choice % 2 == 0:
        chosen = pool[(choice // 2) % len(pool)]
        if isinstance(chosen, dict):
            path_parameters.update(chosen)
        else:
            path_parameters["id"] = chosen
    return path_parameters


@schemathesis.hook
def before_call(context, case, kwargs):
    secret = _SECRETS.get(_header(case.headers, "X-API-Key"))
    body = case.body
    is_json_value = isinstance(body, (dict, list, str, int, float, bool)) or body is None
    # Re-signed only when the case carries both headers: a case leaving one out tests that it is required.
    carries_both = _header(case.headers, "X-Webhook-Signature") is not None and _header(case.headers, "X-Webhook-Timestamp") is not None
    if case.operation.path != "/webhooks/inbound" or secret is None or not carries_both or not is_json_value:
        return
    raw = json.dumps(body).encode("utf-8")
    timestamp = str(int(time.time()))
    _set_header(case.headers, "X-Webhook-Timestamp", timestamp)
    _set_header(case.headers, "X-Webhook-Signature", hmac.new(secret.encode("utf-8"), timestamp.encode() + b"." + raw, hashlib.sha256).hexdigest())
    _set_header(case.headers, "Content-Type", "application/json")
    kwargs["data"] = raw
    if isinstance(body, dict):
        with _LOCK:
            _COVERAGE.write(json.dumps({"event_type": body.get("event_type")}) + "\n")
            _COVERAGE.flush()
