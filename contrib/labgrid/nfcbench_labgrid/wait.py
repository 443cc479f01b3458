"""Waiting for a real event (a port listening, a socket appearing, a line printed) with a
deadline, never for a fixed time."""

import time


class WaitTimeout(Exception):
    pass


def wait_for(condition, timeout, what, alive=None, max_pause=0.02):
    """Return ``condition()``'s first truthy value; raise WaitTimeout naming ``what`` when
    ``timeout`` seconds pass first, or RuntimeError when ``alive()`` turns false (the process
    that should make the event happen has exited). Checks start every millisecond and back
    off to ``max_pause`` (20 ms), so a fast event costs little and a slow one little CPU."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        value = condition()
        if value:
            return value
        if alive is not None and not alive():
            raise RuntimeError(f"{what}: the process exited first")
        now = time.monotonic()
        if now >= deadline:
            raise WaitTimeout(f"{what}: not within {timeout:g} s")
        time.sleep(min(pause, deadline - now))
        pause = min(pause * 2, max_pause)
