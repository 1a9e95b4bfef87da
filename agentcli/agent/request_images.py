"""Which of the conversation's images one request carries: none for a model that takes
only text (each image's description is already in the message text), else the latest
`images.max_per_request`, older ones left out with a note. Copies: the conversation and
the session file keep every image."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agentcli.conversation.images import DEFAULT_MAX_PER_REQUEST
from agentcli.conversation.messages import Message
from agentcli.errors import ProviderError
from agentcli.records import replace

LEFT_OUT = (
    "\n[{count} image(s) of this message left out of this request: only the latest "
    "images.max_per_request ({limit}) of the conversation are sent]"
)


def images_for_request(
    messages: list[Message], *, takes_images: bool, limit: int = DEFAULT_MAX_PER_REQUEST
) -> list[Message]:
    if not any(message.images for message in messages):
        return messages
    budget = limit if takes_images else 0
    fitted = list(messages)
    for index in range(len(fitted) - 1, -1, -1):
        message = fitted[index]
        if not message.images:
            continue
        kept = message.images[max(len(message.images) - budget, 0) :] if budget else []
        budget -= len(kept)
        if len(kept) == len(message.images):
            continue
        content = message.content
        if takes_images:  # a model that sees images is told some are missing, and why
            dropped = len(message.images) - len(kept)
            content += LEFT_OUT.format(count=dropped, limit=limit)
        fitted[index] = replace(message, content=content, images=kept)
    return fitted


REFUSED = {400, 413, 415, 422}  # what a server that takes no images (or not so many) answers


async def hinted(
    stream: AsyncIterator[Any], messages: list[Message], provider: str
) -> AsyncIterator[Any]:
    """The provider's stream; a request with images that the server refuses says how to
    send it without them, in the same one line."""
    try:
        async for item in stream:
            yield item
    except ProviderError as error:
        count = sum(len(message.images) for message in messages)
        if not count or error.status not in REFUSED:
            raise
        hint = (
            f"; the request carried {count} image(s): if this model takes none, set "
            f"`images = false` in [providers.{provider}] (docs/providers.md#images)"
        )
        raise ProviderError(
            str(error) + hint, status=error.status, retryable=error.retryable, detail=error.detail
        ) from None
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
