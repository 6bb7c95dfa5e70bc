"""The feed iterators against the service: long-polling, acknowledging what the loop processed, resuming after it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

from conftest import Stack, wait_until

from construction_integration import WebhookFeedEvent, parse_event
from construction_integration.models import ShapeAEventEmployeeCreated, WebhookEndpoint


def emp_number_of(event: WebhookFeedEvent) -> str:
    body = parse_event(event.body)
    assert isinstance(body, ShapeAEventEmployeeCreated) and body.event_type == event.event_type
    return body.data.emp_number


def test_reads_a_feed_acknowledges_what_was_processed_and_resumes_after_it(stack: Stack) -> None:
    client = stack.client("feed")
    feed = client.post("/webhook-endpoints", {"delivery": "feed", "event_types": ["employee.*"], "api_key_id": None}, model=WebhookEndpoint)

    def write() -> None:
        for n in range(1, 6):
            client.post("/employees", {"emp_number": f"FEED-{n}", "name": f"Feed Person {n}", "email": f"feed{n}@example.com", "employee_type": "office"})
            time.sleep(0.1)

    # Written while the iterator waits: each arrives through a long poll.
    writer = threading.Thread(target=write)
    writer.start()
    seen: list[str] = []
    with contextlib.closing(client.feed(str(feed.id), wait=5, limit=2)) as events:
        for event in events:
            seen.append(emp_number_of(event))
            # Stops inside its third event: that one is not acknowledged, the two before it are.
            if len(seen) == 3:
                break
    writer.join(timeout=30)
    assert seen == ["FEED-1", "FEED-2", "FEED-3"]

    def state() -> dict[str, object]:
        return client.get("/webhook-endpoints/{id}", path_params={"id": feed.id})["feed"]

    # The dispatcher writes the last changes to the feed a moment after they commit.
    wait_until(lambda: state()["unacknowledged_events"] == 3, 10, "the five events in the feed, three unacknowledged", interval=0.5)

    async def resume() -> list[str]:
        stop = asyncio.Event()
        resumed: list[str] = []
        async with stack.async_client("feed") as consumer, contextlib.aclosing(consumer.feed(str(feed.id), wait=1, stop=stop)) as events:
            async for event in events:
                resumed.append(emp_number_of(event))
                if len(resumed) == 3:
                    stop.set()
        return resumed

    # A consumer started again gets the unprocessed event again, then the rest; stopping acknowledges them all.
    assert asyncio.run(resume()) == ["FEED-3", "FEED-4", "FEED-5"]
    after = state()
    assert after["unacknowledged_events"] == 0 and after["acknowledged_cursor"] == after["cursor"]
    client.close()
