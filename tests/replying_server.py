"""A scripted server that chooses each reply from the request it answers, for tests whose
concurrent or numerous requests cannot be queued in order."""

from __future__ import annotations

from tests.scripted_server import RecordedRequest, Reply, ScriptedServer


class ReplyingServer(ScriptedServer):
    """Subclasses implement `reply_for(request)`; `self._cond` guards their counters."""

    def reply_for(self, request: RecordedRequest) -> Reply:
        raise NotImplementedError
