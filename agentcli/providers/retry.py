"""When and how long to wait before retrying a request to a provider."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

RETRYABLE_STATUS = frozenset({408, 409, 429})
MAX_HONOURED_WAIT = 60.0  # longer server hints fall back to our own backoff


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUS or status >= 500


def server_hint(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, then `retry-after`."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    after = headers.get("retry-after")
    if not after:
        return None
    try:
        return float(after)
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(after).timestamp() - time.time()
    except (TypeError, ValueError):
        return None


def backoff_delay(retry_number: int, headers: Mapping[str, str] | None = None) -> float:
    """The wait before retry `retry_number` (0-based): the server's hint when sane, else
    exponential backoff with jitter as the official SDKs do."""
    hint = server_hint(headers or {})
    if hint is not None and 0 <= hint <= MAX_HONOURED_WAIT:
        return hint
    base = min(0.5 * 2**retry_number, 8.0)
    return base * (1 - 0.25 * random.random())
