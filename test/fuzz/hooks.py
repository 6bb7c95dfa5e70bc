"""Schemathesis hooks for test/fuzz/api-fuzz.test.ts: real API keys, and inbound requests signed as senders sign them.

- Authentication: each case gets the test's admin key (its rate limits raised by RATE_LIMIT_MULTIPLIER);
  schemathesis leaves it out where it tests a missing key.
- A POST /webhooks/inbound whose case carries X-Webhook-Timestamp and X-Webhook-Signature is sent as exact
  JSON bytes, signed with the case's key's secret over `<timestamp>.<body>`; a case without one of them (a
  missing-header check) keeps it missing.
- "Every other" below is the first case of each scenario (an operation's run of cases in a phase), then every
  other one (_decide).
- Path ids: every other generated id is swapped for the id of a record the test created (seeds.ts), so
  operations on one record get past their 404. An operation that uses its record up (a DELETE, a lifecycle
  step) has records of its own and takes a new one for each valid case. A path with two ids (a timesheet's
  entry) gets a pair that belongs together. Purchase orders and payroll runs are a second company's (see seeds.ts).
- Bodies: in every other valid body, references to other records (customer_id, employee_id, …) name records
  that exist, and values that must be unique in the company (emp_number, names) are made unique.
- Idempotency-Key: a valid one is made unique per case (generators repeat values, and a reused key is a 422).
- What JSON Schema cannot say is kept right in every other valid case: a list's `after` is left out (a cursor is
  one the list gave, and a generated string is rightly refused), a state or province and a time zone are real ones,
  dates are in order, and fields checked against other records or the record's own are left out (_DEPENDENT_FIELDS,
  _CONSISTENT); a feed is read by its own id.
- The inbound pass's document has each event_type as an operation of its own, at /webhooks/inbound/<event_type>
  (api-fuzz.test.ts, inboundDocument): its cases are sent to /webhooks/inbound, and recorded as that operation's.
- Each signed inbound event_type is recorded, so the test can prove every operation was reached, and so is
  every response's status (with the error's code and field), per operation, for the test's own account.
- Attachment uploads get bodies of each media type the route takes, starting as such a file starts (a PDF with
  %PDF-, …), so they get past the content check to the rest of the route.
"""

import collections
import copy
import datetime
import hashlib
import hmac
import json
import os
import re
import threading
import time
import uuid

import schemathesis
from hypothesis import strategies as st

_KEY = json.load(open(os.environ["FUZZ_KEY_FILE"], encoding="utf-8"))
_LOCK = threading.Lock()
_COVERAGE = open(os.environ["FUZZ_COVERAGE_FILE"], "a", encoding="utf-8")
_RESPONSES = open(os.environ["FUZZ_RESPONSES_FILE"], "a", encoding="utf-8")
_RECORD_IDS = json.load(open(os.environ["FUZZ_IDS_FILE"], encoding="utf-8"))
_USED_UP = set(_RECORD_IDS["used_up"])

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
    """The X-API-Key security scheme, with the test's key (the separate company's, see seeds.ts, where its operations run)."""

    def get(self, case, ctx):
        return _KEY["separate_key"] if _in_separate_company(case) else _KEY["key"]

    def set(self, case, data, ctx):
        if case.headers is None:
            case.headers = {}
        _set_header(case.headers, "X-API-Key", data)


_TURNS = collections.Counter()


def _turn(key):
    """How many times this key was asked for, this time included: the coverage phase repeats its values, so a
    choice drawn from a value would fall the same way every time; the order of the cases is the seed's."""
    with _LOCK:
        _TURNS[key] += 1
        return _TURNS[key]


_SCENARIO = {"current": None, "number": 0, "valid": 0, "other": 0}
# Whether each case is put right, by the case's id: decided once, before any of its parts is changed.
_PUT_RIGHT = {}


def _decide(case):
    """Whether this case is put right (every part the hooks know how to put right, all together): the first valid case
    of each scenario (an operation's run of cases in one phase, which schemathesis makes one after another), then every
    other valid case, and the first and every other invalid one (putting a part right may make an invalid case valid,
    and schemathesis then counts it as one). A time-bounded run makes many small scenarios, and schemathesis warns of
    one whose every valid case was refused: each has a valid case that reaches the operation's logic, and the rest
    still try what the document allows and the service refuses."""
    scenario = (_operation(case), case.meta.phase.name.value if case.meta is not None else None)
    kind = "valid" if _positive(case) else "other"
    with _LOCK:
        if scenario != _SCENARIO["current"]:
            _SCENARIO.update(current=scenario, number=_SCENARIO["number"] + 1, valid=0, other=0)
        _SCENARIO[kind] += 1
        _PUT_RIGHT[case.id] = _SCENARIO[kind] % 2 == 1


def _repairs(case):
    return _PUT_RIGHT.get(case.id, False)


# Operations whose effects reach across a company run in a company of their own (see seeds.ts).
_SEPARATE_COMPANY_PATHS = ("/api/v1/purchase-orders", "/api/v1/payroll-runs")


def _in_separate_company(case):
    return case.operation.path.startswith(_SEPARATE_COMPANY_PATHS)


def _positive(case):
    return case.meta is not None and case.meta.generation.mode.value == "positive"


def _operation(case):
    return f"{case.operation.method.upper()} {case.operation.path}"


_FUZZING_RESERVE = 6


def _use_records(case):
    """Swaps the generated path ids for ids of records the test created: every valid case of an operation that
    uses its record up (a DELETE, a lifecycle step) takes a record of its own, once, and an id of no record once none
    is left; every other case of the other operations takes one of the operation's records."""
    parameters = case.path_parameters
    if not isinstance((parameters or {}).get("id"), str):
        return
    key = _operation(case)
    operations = _RECORD_IDS["operations"]
    chosen = None
    if key in _USED_UP:
        # The coverage phase leaves some for the fuzzing phase, whose cases come after all of its own.
        reserve = _FUZZING_RESERVE if case.meta is not None and case.meta.phase.name.value == "coverage" else 0
        with _LOCK:
            if _positive(case) and len(operations.get(key) or []) > reserve:
                chosen = operations[key].pop(0)
            elif _positive(case):
                # None left: an id of no record. Schemathesis also draws ids from earlier responses, and a valid case
                # would use up a record the other operations need (the project every work order refers to).
                chosen = str(uuid.uuid4())
    else:
        pool = operations.get(key) or operations.get(case.operation.path)
        turn = _turn(key)
        if pool and _repairs(case):
            chosen = pool[(turn // 2) % len(pool)]
    # A new dict: the coverage phase hands the same one to several cases.
    if isinstance(chosen, dict):
        case.path_parameters = {**parameters, **chosen}
    elif chosen is not None:
        case.path_parameters = {**parameters, "id": chosen}


# Operations whose path id must name their seeded record for a valid case to get past the route's own check: a feed is
# read by a feed endpoint's id, and another endpoint's is rightly refused.
_OWN_RECORD_ONLY = {"GET /api/v1/webhook-endpoints/{id}/feed", "POST /api/v1/webhook-endpoints/{id}/feed/ack"}


def _own_record(case):
    """A valid case of an operation in _OWN_RECORD_ONLY names its seeded record, whichever id was generated."""
    key = _operation(case)
    pool = _RECORD_IDS["operations"].get(key) or _RECORD_IDS["operations"].get(case.operation.path)
    if key in _OWN_RECORD_ONLY and (_positive(case) or _repairs(case)) and pool and isinstance((case.path_parameters or {}).get("id"), str):
        case.path_parameters = {**case.path_parameters, "id": pool[0]}


def _keyset_cursor(case):
    """In every other valid case of a list, `after` is left out: a cursor is one the list gave, and a generated string
    is rightly refused (the other half shows it is, without a 5xx)."""
    query = case.query
    if not isinstance(query, dict) or "after" not in query:
        return
    if _repairs(case):
        case.query = {name: value for name, value in query.items() if name != "after"}


# Fields of a valid body that the service checks against other records or the record's own (a contact's customer, a
# timesheet's entries, a time off's day, a work order's dates, a built-in work type's code, an endpoint's credentials)
# and that generated values mostly contradict: left out of every other valid body.
_DEPENDENT_FIELDS = {
    ("POST", "/api/v1/projects"): ("contact_ids",),
    ("PUT", "/api/v1/projects/{id}"): ("customer_id", "location_id", "contact_ids"),
    ("PUT", "/api/v1/contacts/{id}"): ("location_id",),
    ("POST", "/api/v1/time-off"): ("start_time", "end_time"),
    ("PUT", "/api/v1/time-off/{id}"): ("start_date", "end_date", "start_time", "end_time"),
    ("PUT", "/api/v1/timesheets/{id}"): ("entries",),
    ("POST", "/api/v1/work-orders"): ("scheduled_start", "scheduled_end", "start_time", "end_time", "assigned_to", "status"),
    # A status may change only from some statuses, and earlier cases change the seeded work orders' own.
    ("PUT", "/api/v1/work-orders/{id}"): ("scheduled_start", "scheduled_end", "assigned_to", "status"),
    ("PUT", "/api/v1/work-types/{id}"): ("code",),
    ("POST", "/api/v1/employees"): ("employee_skills",),
    ("PUT", "/api/v1/employees/{id}"): ("employee_skills",),
    ("PUT", "/api/v1/purchase-orders/{id}"): ("not_to_exceed_amount", "line_items"),
    ("POST", "/api/v1/webhook-endpoints"): ("authentication",),
    ("PUT", "/api/v1/webhook-endpoints/{id}"): ("authentication",),
}


# A change that every record of the operation takes, for a body whose only fields were dependent ones (a timesheet's
# update of entries alone: a slow CI run's few cases were then mostly empty updates, and schemathesis warned).
_HARMLESS_CHANGE = {
    ("PUT", "/api/v1/timesheets/{id}"): {"notes": None},
    ("PUT", "/api/v1/work-orders/{id}"): {"priority": "normal"},
}


def _list(value):
    """The items of a list; nothing of any other value (an invalid case may have anything there)."""
    return value if isinstance(value, list) else []


def _ordered_dates(body, start, end):
    """An end that comes before its start is made the start."""
    if isinstance(body.get(start), str) and isinstance(body.get(end), str) and body[end] < body[start]:
        body[end] = body[start]


def _timesheet_entries(body):
    """A new timesheet's entries are of its day, of the company's default work type (a named one must exist, and a
    billable one needs a work order)."""
    for entry in _list(body.get("entries")):
        if isinstance(entry, dict):
            if isinstance(body.get("timesheet_date"), str):
                entry["entry_date"] = body["timesheet_date"]
            for field in ("work_type_name", "work_type_code", "work_type_id", "work_order_number", "work_order_id"):
                entry.pop(field, None)


def _receipt(body):
    """A receipt takes each line item once, one unit of it (each of the order's has 5 to receive)."""
    seen = set()
    items = []
    for item in _list(body.get("received_items")):
        if isinstance(item, dict) and isinstance(item.get("line_item_id"), str) and item["line_item_id"] not in seen:
            seen.add(item["line_item_id"])
            items.append({**item, "quantity_received": 1})
    if isinstance(body.get("received_items"), list):
        body["received_items"] = items


def _new_line_items(body):
    """A new order's line items have no ids yet."""
    for item in _list(body.get("line_items")):
        if isinstance(item, dict):
            item.pop("id", None)


# What the service checks beyond JSON Schema, put right in every other valid body.
_CONSISTENT = {
    ("POST", "/api/v1/payroll-runs"): lambda body: _ordered_dates(body, "period_start", "period_end"),
    ("POST", "/api/v1/time-off"): lambda body: _ordered_dates(body, "start_date", "end_date"),
    ("POST", "/api/v1/timesheets"): _timesheet_entries,
    ("POST", "/api/v1/purchase-orders/{id}/receive"): _receipt,
    ("POST", "/api/v1/purchase-orders"): _new_line_items,
}
# Values the service takes of fields JSON Schema says only are text: a US state or Canadian province, an IANA time zone.
_REAL_VALUES = {"state": ("TX", "CA", "ON", "NY"), "timezone": ("America/Toronto", "UTC", "Europe/Paris")}


def _real_values(value, turn):
    """Every field of _REAL_VALUES in a body, however deep, given a value the service takes."""
    if isinstance(value, dict):
        for field, inner in value.items():
            choices = _REAL_VALUES.get(field)
            if choices and isinstance(inner, str):
                value[field] = choices[turn % len(choices)]
            else:
                _real_values(inner, turn)
    elif isinstance(value, list):
        for inner in value:
            _real_values(inner, turn)


_LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")


def _storable_text(value):
    """Text without unpaired UTF-16 surrogates, which the service refuses in any string (PostgreSQL cannot store them),
    a rule JSON Schema cannot state; tested on its own by the hostile-input suite."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("?", value)
    if isinstance(value, dict):
        return {_storable_text(key): _storable_text(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_storable_text(inner) for inner in value]
    return value


def _consistent_body(case):
    """In every other valid body, dependent fields are left out, what the service checks beyond JSON Schema is put right,
    and every state and time zone is a real one."""
    body = case.body
    if not isinstance(body, dict) or not _repairs(case):
        return
    turn = _turn(f"{_operation(case)} consistent")
    # A copy (the coverage phase hands the same body to several cases), its text storable.
    body = case.body = _storable_text(copy.deepcopy(body))
    operation = (case.operation.method.upper(), case.operation.path)
    for field in _DEPENDENT_FIELDS.get(operation, ()):
        body.pop(field, None)
    # An update of nothing is refused (minProperties): one left with none of its fields changes a harmless one.
    if not body and operation in _HARMLESS_CHANGE:
        body.update(_HARMLESS_CHANGE[operation])
    if operation in _CONSISTENT:
        _CONSISTENT[operation](body)
    _real_values(body, turn)


def _uuid_like(value):
    return isinstance(value, str) and len(value) == 36 and value.count("-") == 4


def _refer_to_records(case):
    """Line items named in a valid body are the order's own; in every other valid body, the references to other
    records (customer_id, employee_id, …) name records that exist, a location one of its customer's, a feed cursor the
    seeded feed's start; and the values that must be unique in the company (emp_number, names) are made so, and
    skills are the company's."""
    body = case.body
    if not isinstance(body, dict) or not (_positive(case) or _repairs(case)):
        return
    line_items = _RECORD_IDS["line_items"].get((case.path_parameters or {}).get("id"))
    for field, id_field in (("received_items", "line_item_id"), ("line_items", "id")):
        if line_items and isinstance(body.get(field), list):
            for n, item in enumerate(body[field]):
                if isinstance(item, dict) and _uuid_like(item.get(id_field)):
                    item[id_field] = line_items[n % len(line_items)]
    turn = _turn(f"{_operation(case)} body")
    if not _repairs(case):
        return
    references = _RECORD_IDS["separate_references" if _in_separate_company(case) else "references"]
    for field, value in list(body.items()):
        kind = references["fields"].get(field)
        pool = references.get(kind) if kind else None
        if pool and (_uuid_like(value) or kind == "feed_cursor"):
            body[field] = pool[(turn // 2) % len(pool)]
        elif field == "url" and case.operation.path.startswith("/api/v1/webhook-endpoints"):
            body[field] = _ENDPOINT_URL
        elif field in _UNIQUE and isinstance(value, str):
            suffix = uuid.uuid4().hex[:12]
            body[field] = f"FZ-{suffix}" if field in _CODES else f"{value[:50]} {suffix}"
        elif field == "employee_skills" and isinstance(value, list) and references.get("skill_names"):
            body[field] = references["skill_names"][: len(value)]
    _unique_dates(case, body, turn)
    pairs = references["location_pairs"]
    if case.operation.path == "/api/v1/projects" and case.operation.method.upper() == "POST" and pairs:
        # Exactly one of customer_id and customer names the customer, and one of location_id and location the location.
        body.pop("customer", None)
        body.pop("location", None)
        body.update(pairs[(turn // 2) % len(pairs)])
    elif _uuid_like(body.get("location_id")) and _uuid_like(body.get("customer_id")) and pairs:
        body.update(pairs[(turn // 2) % len(pairs)])


# Records unique per employee and dates: a new time off moves its dates (keeping their span) to days no case has used,
# as a different employee would not be enough once each has time off on the few dates the generators repeat.
_UNIQUE_DATES = {("POST", "/api/v1/time-off"): ("start_date", "end_date")}
_FIRST_FREE_DAY = datetime.date(2300, 1, 1)


def _unique_dates(case, body, turn):
    fields = _UNIQUE_DATES.get((case.operation.method.upper(), case.operation.path))
    if not fields:
        return
    try:
        dates = [datetime.date.fromisoformat(body[field]) for field in fields]
    except (KeyError, TypeError, ValueError):
        return
    shift = _FIRST_FREE_DAY + datetime.timedelta(days=turn) - dates[0]
    try:
        moved = [date + shift for date in dates]
    except OverflowError:
        return
    for field, date in zip(fields, moved):
        body[field] = date.isoformat()


_UNIQUE = {"emp_number", "vendor_name", "role_name", "name", "last_name", "project_code", "po_number"}
# Unique values with a pattern of their own (no spaces): made unique as FZ-<hex>.
_CODES = {"emp_number", "project_code", "po_number"}
# The test's subscriber endpoint: loopback, which the test's configuration allows.
_ENDPOINT_URL = "https://127.0.0.1:9/fuzz"


# A filter the service's own check (beyond its JSON Schema: a path's syntax, a value of the operator's kind) accepts.
_ENDPOINT_FILTER = {"and": [{"path": "data.id", "exists": True}, {"not": {"path": "event_type", "eq": "fuzz.none"}}]}


def _filter_test_body(case):
    """A valid filter test names one event to try: a body, or the company's latest event of a type (one the seeds made),
    in turns; which one JSON Schema does not say. Its filter, when it has one, is one the service's check accepts."""
    body = case.body
    if case.operation.method.upper() != "POST" or case.operation.path != "/api/v1/webhook-endpoints/{id}/test-filter" or not isinstance(body, dict) or not _positive(case):
        return
    if _turn("filter test event") % 2:
        body.pop("event", None)
        body["event_type"] = "customer.created"
    else:
        body.pop("event_type", None)
        if not isinstance(body.get("event"), dict):
            body["event"] = {"event_type": "customer.created", "data": {"id": "fuzz"}}
    if body.get("filter") is not None:
        body["filter"] = _ENDPOINT_FILTER


# Transformations the service's own check (beyond its JSON Schema: JSONata that parses, header names allowed, a path that
# stays relative) accepts: the body alone for a feed (or an update, whose endpoint may be one), all three for a webhook.
_FEED_TRANSFORMATION = {"body": "data"}
_WEBHOOK_TRANSFORMATION = {"body": '{"id": data.id, "type": event_type}', "headers": {"X-Fuzz": "event_type"}, "path": '"/fuzz/" & event_type'}


def _transformation_test_body(case):
    """A valid transformation test names one event to try, as a filter test does; its transformation, when it has one,
    is one the service's check accepts."""
    body = case.body
    if case.operation.method.upper() != "POST" or case.operation.path != "/api/v1/webhook-endpoints/{id}/test-transformation" or not isinstance(body, dict) or not _positive(case):
        return
    if _turn("transformation test event") % 2:
        body.pop("event", None)
        body["event_type"] = "customer.created"
    else:
        body.pop("event_type", None)
        if not isinstance(body.get("event"), dict):
            body["event"] = {"event_type": "customer.created", "data": {"id": "fuzz"}}
    if body.get("transformation") is not None:
        body["transformation"] = _FEED_TRANSFORMATION


def _endpoint_body(case):
    """A valid registration is one kind of endpoint or the other, which one JSON Schema does not say: a feed has no URL,
    authentication, rate limit or ordering per record; a webhook has the test's URL. A filter generated from the schema
    alone is mostly refused by the service's check of its paths and values, so a valid one stands in for it (in every
    other valid update too)."""
    body = case.body
    if not isinstance(body, dict) or not _positive(case):
        return
    if (case.operation.method.upper(), case.operation.path) == ("PUT", "/api/v1/webhook-endpoints/{id}") and _repairs(case):
        if body.get("filter") is not None:
            body["filter"] = _ENDPOINT_FILTER
        if body.get("transformation") is not None:
            body["transformation"] = _FEED_TRANSFORMATION
    if case.operation.method.upper() != "POST" or case.operation.path != "/api/v1/webhook-endpoints":
        return
    if body.get("delivery") == "feed":
        for field in ("url", "authentication", "max_attempts_per_second"):
            body.pop(field, None)
        if body.get("ordering") == "per_record":
            body.pop("ordering")
        if body.get("transformation") is not None:
            body["transformation"] = _FEED_TRANSFORMATION
    else:
        body["url"] = _ENDPOINT_URL
        if body.get("transformation") is not None:
            body["transformation"] = _WEBHOOK_TRANSFORMATION
    if body.get("filter") is not None:
        body["filter"] = _ENDPOINT_FILTER


_IDEMPOTENCY_KEY = re.compile(r"^[!-~]{1,255}$")


def _unique_idempotency_key(case):
    """A valid Idempotency-Key made unique per case: generators repeat values, and a key reused for another
    request is rightly a 422."""
    value = _header(case.headers, "Idempotency-Key")
    if value is not None and _IDEMPOTENCY_KEY.match(value):
        _set_header(case.headers, "Idempotency-Key", f"fuzz-{uuid.uuid4()}")


_INBOUND_PATH = "/webhooks/inbound"


def _is_inbound(case):
    return case.operation.path == _INBOUND_PATH or case.operation.path.startswith(_INBOUND_PATH + "/")


def _recorded_operation(case):
    """The operation a response is counted for: an inbound event_type's own path is the inbound endpoint's."""
    return f"{case.operation.method.upper()} {_INBOUND_PATH if _is_inbound(case) else case.operation.path}"


@schemathesis.hook
def before_call(context, case, kwargs):
    if _is_inbound(case):
        kwargs["url"] = os.environ["FUZZ_BASE_URL"] + _INBOUND_PATH
    _decide(case)
    _use_records(case)
    _own_record(case)
    _keyset_cursor(case)
    _unique_idempotency_key(case)
    _refer_to_records(case)
    _endpoint_body(case)
    _filter_test_body(case)
    _transformation_test_body(case)
    _consistent_body(case)
    secret = _KEY["secret"] if _header(case.headers, "X-API-Key") == _KEY["key"] else None
    body = case.body
    is_json_value = isinstance(body, (dict, list, str, int, float, bool)) or body is None
    # Re-signed only when the case carries both headers: a case leaving one out tests that it is required.
    carries_both = _header(case.headers, "X-Webhook-Signature") is not None and _header(case.headers, "X-Webhook-Timestamp") is not None
    if not _is_inbound(case) or secret is None or not carries_both or not is_json_value:
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


@schemathesis.hook
def after_call(context, case, response):
    error = {}
    if response.status_code >= 400:
        try:
            body = response.json()
            error = body.get("error", {}) if isinstance(body, dict) else {}
        except ValueError:
            pass
    details = error.get("details") if isinstance(error.get("details"), dict) else {}
    meta = case.meta
    record = {
        "operation": _recorded_operation(case),
        "status": response.status_code,
        "positive": meta is not None and meta.generation.mode.value == "positive",
        "phase": meta.phase.name.value if meta is not None else None,
        "path_parameters": case.path_parameters,
        "code": error.get("code"),
        "field": details.get("field"),
        "reason": details.get("reason"),
        "scenario": _SCENARIO["number"],
        "put_right": _PUT_RIGHT.pop(case.id, False),
    }
    with _LOCK:
        _RESPONSES.write(json.dumps(record) + "\n")
        _RESPONSES.flush()
