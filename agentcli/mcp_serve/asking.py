"""A call that would ask, put to the MCP client: as an elicitation (a form with one choice)
when the client offers one on this request's connection, else refused at once with how to
allow it (`mcp serve --yes`, `--allow RULE`) — never waiting for an answer that cannot
come. What `--yes`, `--deny`, rules and the boundary decide is decided before this is
asked (agentcli.policy.engine), as in a run."""

from __future__ import annotations

import contextvars
import json
import logging
from typing import Any

from agentcli.policy.engine import NobodyToAsk, Prompt, UserChoice, offered

# The MCP request whose call is being decided (each tools/call runs in its own task,
# which copies this into the call's tasks).
current_request: contextvars.ContextVar[Any] = contextvars.ContextVar("mcp_serve_request")

HOW_TO_ALLOW = (
    "start agentcli mcp serve with --yes to allow what would ask, or --allow RULE for this "
    "kind of call"
)
NO_ELICITATION = f"the MCP client cannot be asked (it offers no elicitation); {HOW_TO_ALLOW}"
_logger = logging.getLogger("agentcli.mcp_serve")


def can_elicit(request: Any) -> bool:
    """The client declared form elicitation, and this request can carry a request back."""
    session = request.session
    capabilities = session.client_capabilities
    elicitation = getattr(capabilities, "elicitation", None)
    if elicitation is None or not session.can_send_request:
        return False
    # `elicitation: {}` means form mode (the spec's default); `{"url": {}}` alone does not.
    return elicitation.form is not None or elicitation.url is None


def choices(prompt: Prompt) -> dict[str, str]:
    """What the form offers, each with its label: this call; the same again while this
    server runs, where a rule can describe it; no. Never "this project": a client's answer
    does not write the project's rules."""
    labels = {
        "once": "yes, this call",
        "session": "yes, and the same again while this server runs",
        "deny": "no",
    }
    return {kind: labels[kind] for kind in offered(prompt) if kind in labels}


def question(prompt: Prompt) -> str:
    request = prompt.request
    lines = request.description or [json.dumps(request.arguments, ensure_ascii=False)]
    said = "; ".join(prompt.reasons) or request.assessment.reason
    return (
        f"agentcli asks: run {request.tool} ({request.assessment.risk.label} risk: {said})?\n"
        + "\n".join(lines)
    )


def form(kinds: dict[str, str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "choice": {
                "type": "string",
                "title": "Run it?",
                "oneOf": [{"const": kind, "title": label} for kind, label in kinds.items()],
                "default": next(iter(kinds)),
            }
        },
        "required": ["choice"],
    }


async def ask_client(prompt: Prompt) -> UserChoice | NobodyToAsk:
    """The policy's approver for `mcp serve`. What only a person may allow (a path beyond
    the boundary, a command the protected paths' guard cannot cover) is never put to the
    client: its answer may come from a program. The refusal's reasons say how to allow it
    (`--add-dir DIR`, say); no flag would, so no hint is added (agentcli.policy.engine)."""
    if prompt.person_only:
        return NobodyToAsk(NO_ELICITATION)
    request = current_request.get(None)
    if request is None or not can_elicit(request):
        return NobodyToAsk(NO_ELICITATION)
    kinds = choices(prompt)
    try:
        result = await request.session.elicit_form(
            question(prompt), form(kinds), related_request_id=request.request_id
        )
    except Exception as error:  # the client failed to answer: nobody said yes
        _logger.debug("elicitation failed: %s", error)
        return NobodyToAsk(f"asking the MCP client failed ({error}); {HOW_TO_ALLOW}")
    if result.action != "accept":
        said = "declined" if result.action == "decline" else "cancelled"
        return UserChoice("deny", f"the MCP client {said} it")
    choice = (result.content or {}).get("choice", next(iter(kinds)))
    if choice not in kinds:
        return UserChoice("deny", f"the MCP client answered {str(choice)[:40]!r}, not a choice")
    return UserChoice(choice)  # type: ignore[arg-type]
