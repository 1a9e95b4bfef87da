"""How tool activity looks on stderr, shared by the text output, the REPL and the result
lines: ANSI styling (or none), a call's arguments and a remote agent's state in one short
line."""

from __future__ import annotations

import json

from agentcli.conversation import events as ev
from agentcli.output.visible import visible

_MAX_ARGS_SHOWN = 160


class Styler:
    """ANSI styling for stderr lines, or none at all when not on a colour terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def red(self, text: str) -> str:
        return self._wrap("31", text)

    def green(self, text: str) -> str:
        return self._wrap("32", text)

    def yellow(self, text: str) -> str:
        return self._wrap("33", text)


def format_arguments(raw: str) -> str:
    try:
        args = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        shown = raw
    else:
        if isinstance(args, dict):
            shown = " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
        else:
            shown = json.dumps(args, ensure_ascii=False)
    shown = visible(" ".join(shown.split()))
    if len(shown) > _MAX_ARGS_SHOWN:
        shown = shown[: _MAX_ARGS_SHOWN - 1] + "…"
    return shown


def state_line(event: ev.StateSnapshot | ev.StateDelta) -> str:
    """A remote agent's state (AG-UI STATE_SNAPSHOT / STATE_DELTA) as one short line."""
    if isinstance(event, ev.StateDelta):
        paths = ", ".join(str(op.get("path")) for op in event.delta if isinstance(op, dict))
        shown = f"{len(event.delta)} change(s): {paths}"
    else:
        shown = json.dumps(event.snapshot, ensure_ascii=False, default=str)
    shown = " ".join(shown.split())
    return shown if len(shown) <= _MAX_ARGS_SHOWN else shown[: _MAX_ARGS_SHOWN - 1] + "…"
