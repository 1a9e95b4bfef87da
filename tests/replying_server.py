"""A scripted server that chooses each reply from the request it answers, for tests whose
concurrent or numerous requests cannot be queued in order."""

from __future__ import annotations

import threading
from typing import Any

from tests.scripted_server import RecordedRequest, Reply, ScriptedServer


class ReplyingServer(ScriptedServer):
    """Subclasses implement `reply_for(request)`; `self._cond` guards their counters."""

    def __init__(self) -> None:
        super().__init__()
        self._local = threading.local()  # each connection is handled on its own thread

    def reply_for(self, request: RecordedRequest) -> Reply:
        raise NotImplementedError

    def _record(self, request: Any) -> None:
        self._local.request = request
        super()._record(request)

    def _next_reply(self) -> Reply:
        return self.reply_for(self._local.request)
