"""The package as users get it: a wheel and an sdist, installed into a fresh virtualenv; typed for mypy --strict."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from conftest import PROJECT_ROOT

SDK_DIR = PROJECT_ROOT / "sdk/python"

#: Run by the fresh virtualenv's Python: the installed package, not the sources the tests import.
SMOKE = """
import hashlib, hmac, json, time
import construction_integration
from construction_integration import Client, verify_webhook
from construction_integration.models import ShapeBEventWorkorderCreated

body = json.dumps({"event": "workorder.created", "timestamp": "2026-03-02T08:00:00.000Z", "data": {
    "id": "w1", "workOrderNumber": "WO-000001", "title": "Framing", "status": "open", "priority": "high", "projectId": "p1"}}).encode()
timestamp = str(int(time.time()))
signature = hmac.new(b"whsec_example", timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
event = verify_webhook(body, {"x-webhook-timestamp": timestamp, "x-webhook-signature": signature}, "whsec_example")
assert isinstance(event, ShapeBEventWorkorderCreated), event
Client("https://construction.example.com/api/v1", "cik_example").close()
print(construction_integration.__file__, event.data.workOrderNumber)
"""

#: A user's module: mypy --strict must accept it, and each `type: ignore` must stand on a real error (strict warns of unused ones).
CONSUMER = '''
from construction_integration import ApiError, Client, WebhookEvent, WebhookVerificationError, verify_webhook
from construction_integration.models import Customer, ShapeAEventWorkOrderCreated, ShapeBEventWorkorderCreated
from starlette.requests import Request


def names(client: Client) -> list[str]:
    created: Customer = client.post("/customers", {"name": "Acme"}, model=Customer)
    found = [customer.name for customer in client.paginate("/customers", params={"status": "Active"}, model=Customer)]
    answer = client.send_inbound("employee.created", {"emp_number": "E-1", "name": "Dana", "email": "dana@example.com", "employee_type": "site_worker"})
    search = client.send_inbound("project.search", {"search_term": "Tower"})
    try:
        client.delete("/customers/{id}", path_params={"id": created.id})
    except ApiError as error:
        found.append(f"{error.code} {error.details.field} {error.retry_after_seconds}")
    created.title  # type: ignore[attr-defined]
    return [*found, answer.record_id or "", str(search.count)]


def receive(body: bytes, headers: dict[str, str]) -> str:
    try:
        event: WebhookEvent = verify_webhook(body, headers, ["whsec_new", "whsec_old"], tolerance_seconds=300)
    except WebhookVerificationError as error:
        return error.code
    if isinstance(event, ShapeAEventWorkOrderCreated):
        return event.data.work_order_number
    if isinstance(event, ShapeBEventWorkorderCreated):
        return event.data.workOrderNumber
    return str(event.data.name)  # type: ignore[union-attr]


async def receive_in_starlette(request: Request) -> WebhookEvent:
    return verify_webhook(await request.body(), request.headers, "whsec_example")
'''


def run(*command: str | Path, cwd: Path = SDK_DIR, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(map(str, command))} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_builds_a_wheel_and_an_sdist_that_install_into_a_fresh_virtualenv(tmp_path: Path) -> None:
    # No build isolation: hatchling comes from the tests' virtualenv, not from a download for each build.
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", tmp_path / "dist", SDK_DIR)
    [wheel] = (tmp_path / "dist").glob("construction_integration-0.1.0-py3-none-any.whl")
    [sdist] = (tmp_path / "dist").glob("construction_integration-0.1.0.tar.gz")
    packaged = {name.removeprefix("construction_integration/") for name in zipfile.ZipFile(wheel).namelist() if name.startswith("construction_integration/")}
    assert packaged == {"__init__.py", "client.py", "errors.py", "models.py", "py.typed", "retries.py", "_signature.py", "webhooks.py"}
    with tarfile.open(sdist) as archive:
        assert {"construction_integration-0.1.0/pyproject.toml", "construction_integration-0.1.0/src/construction_integration/py.typed"} <= set(archive.getnames())

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    # Its dependencies from the wheels the tests' virtualenv keeps: offline, and as pip resolves them for users.
    run(sys.executable, "-m", "pip", "--python", venv / "bin/python", "install", "--quiet", "--disable-pip-version-check", "--no-index", "--find-links", os.environ["PYSDK_WHEELHOUSE"], wheel)
    clean = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    installed, number = run(venv / "bin/python", "-c", SMOKE, cwd=tmp_path, env=clean).split()
    assert Path(installed).is_relative_to(venv)
    assert number == "WO-000001"


def test_the_package_and_a_user_of_it_pass_mypy_strict(tmp_path: Path) -> None:
    consumer = tmp_path / "consumer.py"
    consumer.write_text(CONSUMER)
    # The configuration is sdk/python/pyproject.toml's: strict, with pydantic's plugin.
    cache = Path(os.environ.get("PYSDK_MYPY_CACHE", tmp_path / "mypy-cache"))
    output = run(sys.executable, "-m", "mypy", "--cache-dir", cache, "src/construction_integration", consumer)
    assert output.startswith("Success: no issues found")
