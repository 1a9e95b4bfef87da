"""`@server:uri` in a chat message: the MCP server's resource goes into the message, as
`@path` attaches a file. The resource is subscribed to where the server offers it: when
the server says it changed, its new content goes with the next message. Servers still
starting are waited for (said once). Completion offers the servers and their listed URIs."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import Any

from agentcli.tools.content import render_text
from agentcli.ui.mentions import MAX_BYTES, expand_mentions
from agentcli.workspace.root import Workspace

RESOURCE_MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_-]{1,32}):(\S+)")


def catalogs(registry: Any) -> dict[str, Any]:
    """Server name → its resources (agentcli.mcp.resources.ServerResources)."""
    return {
        source.config.name: source.catalog
        for source in registry.sources
        if source.kind == "mcp" and hasattr(source, "catalog")
    }


async def expand_chat_mentions(
    text: str, workspace: Workspace, registry: Any, say: Callable[[str], None], **files: Any
) -> tuple[str, list[str], list[Any]]:
    """The message with the files and resources it mentions attached (and the resources
    attached before that changed since), notes on what was done, and the images attached
    (`files`: expand_mentions' image settings)."""
    servers = catalogs(registry)
    mentioned = [
        (m.group(0), m.group(1), m.group(2).rstrip(".,;:!?)"))
        for m in RESOURCE_MENTION.finditer(text)
        if m.group(1) in servers
    ]
    if mentioned and registry.starting:
        say("  (waiting for the MCP servers to start…)")
        await registry.started()
    skipped = {whole for whole, _, _ in mentioned}
    message, notes, images = expand_mentions(
        text, workspace, skip=lambda word: "@" + word in skipped, **files
    )
    attachments = []
    wanted = [(server, uri, False) for _, server, uri in mentioned]
    for server, catalog in servers.items():
        wanted += [(server, uri, True) for uri in catalog.take_updated()]
    seen = set()
    for server, uri, changed in wanted:
        if (server, uri) in seen:
            continue
        seen.add((server, uri))
        attachment, note = await _attach(servers[server], server, uri, changed)
        notes.append(note)
        if attachment:
            attachments.append(attachment)
    if not attachments:
        return message, notes, images
    return message + "\n\n" + "\n\n".join(attachments), notes, images


async def _attach(catalog: Any, server: str, uri: str, changed: bool) -> tuple[str, str]:
    from agentcli.tools.base import ToolFailure

    try:
        parts = await catalog.read(uri)
    except ToolFailure as failure:
        return "", f"@{server}:{uri}: {failure}; not attached"
    content = render_text(parts)
    size = len(content.encode("utf-8"))
    if size > MAX_BYTES:
        content = content.encode("utf-8")[:MAX_BYTES].decode("utf-8", errors="ignore")
        content += f"\n[… cut at {MAX_BYTES:,} bytes]"
    why = "changed since it was attached; attached again" if changed else "attached"
    shown = f"first {MAX_BYTES:,} bytes" if size > MAX_BYTES else f"{size:,} bytes"
    tag = f'<resource server="{server}" uri="{_attribute(uri)}">\n{content}\n</resource>'
    return tag, f"{why} {server}:{uri} ({shown})"


def _attribute(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def resource_completions(fragment: str, registry: Any) -> Iterator[tuple[str, str]]:
    """(completion, display) pairs for what follows `@`: `server:` for a server name
    begun, and the listed URIs after `server:`."""
    servers = catalogs(registry)
    name, colon, partial = fragment.partition(":")
    if not colon:
        for server, catalog in sorted(servers.items()):
            if server.startswith(fragment) and catalog.offered:
                yield f"{server}:", f"{server}: (MCP resources)"
        return
    catalog = servers.get(name)
    if catalog is None:
        return
    if catalog.stale and catalog.offered:  # listed in the background, for the next key
        import asyncio

        with contextlib.suppress(RuntimeError):  # no running loop: nothing to list with
            asyncio.get_running_loop().create_task(catalog.listing())
    for resource in catalog.listed[:200]:
        uri = str(resource.uri)
        if uri.startswith(partial):
            yield f"{name}:{uri}", uri
