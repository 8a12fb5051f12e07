"""Polling for a condition that another process brings about (worker, browser, socket)."""
import time


def wait_for(predicate, timeout=30.0, interval=0.05):
    """The predicate's first truthy value, or an AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")
