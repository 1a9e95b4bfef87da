"""MCP resources, readable by the model and by the user, and the lists that change.

Each server has a `ServerResources`: its resources as last listed (listed again after
notifications/resources/list_changed), reads that turn contents into parts, and
subscriptions (resources/subscribe where the server offers it) whose
notifications/resources/updated mark a resource as changed since it was read, so the REPL
attaches it again with the next message. notifications/prompts/list_changed lists the
prompts again (the REPL's slash commands).

The model reads through one tool, `mcp_read_resource(server, uri)`, from
`ResourceSource`: present while a running server offers resources; its description names
some of them. Its risk follows the server's: a trusted server's resource is low (reading
is what resources are for), an untrusted one's high, as its tools are. Contents are capped
as tool output is (agentcli.mcp.results)."""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from typing import Any

from agentcli.conversation.images import human_size
from agentcli.risk import Assessment, Risk
from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from agentcli.tools.content import ImagePart, Part, TextPart
from agentcli.tools.source import ToolSource

READ_TOOL = "mcp_read_resource"
LIST_TIMEOUT = 10.0  # seconds a resources/list may take before the listing stays as it was
SHOWN_IN_DESCRIPTION = 20  # resources per server named in the tool's description
MAX_LISTED = 1000  # resources kept per server (a paged list may be endless)


class ServerResources:
    """One server's resources, subscriptions and list changes (`server`: its McpServer)."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.listed: list[Any] = []  # the SDK's Resource, as last listed
        self.stale = True  # listed again before it is next shown
        self.watched: set[str] = set()  # subscribed URIs
        self.updated: set[str] = set()  # watched URIs the server says changed
        self.source: ResourceSource | None = None  # told when the list changed
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def offered(self) -> bool:
        return self.server.state == "running" and bool(
            getattr(self.server.capabilities, "resources", None)
        )

    async def listing(self) -> list[Any]:
        """The resources, listed again when the server said its list changed."""
        if self.stale and self.offered:
            with contextlib.suppress(Exception):  # a dead or slow server: the last listing
                self.listed = await asyncio.wait_for(self._list(), LIST_TIMEOUT)
                self.stale = False
        return self.listed if self.offered else []

    async def _list(self) -> list[Any]:
        from mcp.types import PaginatedRequestParams

        session, listed, cursor = self.server.session, [], None
        while session is not None and len(listed) < MAX_LISTED:
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_resources(params=params)
            listed.extend(page.resources)
            cursor = page.next_cursor
            if not cursor:
                break
        return listed[:MAX_LISTED]

    async def read(self, uri: str) -> list[Part]:
        """The resource's contents as parts; raises ToolFailure with the server's reason."""
        if not self.offered:
            raise ToolFailure(f"MCP server {self.server.config.name} offers no resources")
        session = await self.server.live_session()
        try:
            result = await session.read_resource(uri)
        except Exception as error:
            raise ToolFailure(
                f"MCP server {self.server.config.name} could not read {uri}: {error}"
            ) from None
        self.updated.discard(uri)
        await self.watch(uri)
        return contents_parts(result.contents) or [TextPart(f"({uri} is empty)")]

    async def watch(self, uri: str) -> None:
        """Subscribes to `uri` where the server offers subscriptions (once per URI)."""
        resources = getattr(self.server.capabilities, "resources", None)
        if uri in self.watched or not getattr(resources, "subscribe", False):
            return
        self.watched.add(uri)
        session = self.server.session
        with contextlib.suppress(Exception), warnings.catch_warnings():
            # resources/subscribe is the 2025 protocol the servers speak; the SDK warns
            # that a later one replaces it
            warnings.simplefilter("ignore")
            await session.subscribe_resource(uri)

    def take_updated(self) -> list[str]:
        """The watched URIs that changed since they were last read, once."""
        changed, self.updated = sorted(self.updated), set()
        return changed

    def notice(self, message: Any) -> None:
        """A notification from the server (called by its message handler, which must not
        wait on a request: what needs one runs in a task of its own)."""
        method = getattr(message, "method", "")
        if method == "notifications/resources/list_changed":
            self.stale = True
            if self.source is not None:
                self.source.changed = True  # the tool's description names the resources
        elif method == "notifications/resources/updated":
            uri = str(getattr(getattr(message, "params", None), "uri", "") or "")
            if uri in self.watched:
                self.updated.add(uri)
        elif method == "notifications/prompts/list_changed":
            task = asyncio.ensure_future(self._list_prompts())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _list_prompts(self) -> None:
        session = self.server.session
        if session is not None:
            with contextlib.suppress(Exception):
                self.server.prompts = list((await session.list_prompts()).prompts)


def contents_parts(contents: list[Any]) -> list[Part]:
    parts: list[Part] = []
    for item in contents:
        text = getattr(item, "text", None)
        mime = getattr(item, "mime_type", None) or ""
        if text is not None:
            parts.append(TextPart(text))
        elif mime.startswith("image/"):
            parts.append(ImagePart.sniffed(item.blob, mime))
        else:
            size = ImagePart(getattr(item, "blob", "") or "", "").size
            kind = f" {mime}" if mime else ""
            parts.append(TextPart(f"({human_size(size)} of binary{kind} content)"))
    return parts


class ReadResource(Tool):
    """`mcp_read_resource(server, uri)`: one tool for every server's resources."""

    name = READ_TOOL
    source = "mcp"
    risk_summary = "low/high"  # as the server is trusted or not

    def __init__(self, catalogs: dict[str, ServerResources], listings: dict[str, list[Any]]):
        self.catalogs = catalogs
        names = sorted(catalogs)
        self.parameters = {
            "type": "object",
            "properties": {
                "server": {"type": "string", "enum": names, "description": "The MCP server."},
                "uri": {"type": "string", "description": "The resource's URI."},
            },
            "required": ["server", "uri"],
            "additionalProperties": False,
        }
        self.description = describe(listings)

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        catalog = self.catalogs.get(args.get("server", ""))
        if catalog is None:  # the schema's enum stops this first
            return Assessment(Risk.HIGH, f"{READ_TOOL}: no such MCP server")
        config = catalog.server.config
        if config.trusted:
            return Assessment(Risk.LOW, f"{READ_TOOL}: trusted MCP server {config.name}'s resource")
        return Assessment(
            Risk.HIGH, f"{READ_TOOL}: high risk (MCP server {config.name} is not marked trusted)"
        )

    def describe(self, args: dict[str, Any]) -> list[str]:
        return [f"MCP server {args.get('server')}, resource {args.get('uri')}"]

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        from agentcli.mcp.results import capped

        catalog = self.catalogs.get(args["server"])
        if catalog is None:
            raise ToolFailure(f"no MCP server {args['server']} offers resources")
        parts = await catalog.read(args["uri"])
        return ToolOutput.of_parts(capped(parts, ctx, "resource"))


def describe(listings: dict[str, list[Any]]) -> str:
    lines = ["Read a resource of an MCP server by its URI (text, or an image). Known resources:"]
    for server, listed in sorted(listings.items()):
        shown = [
            f"{r.uri}" + (f" ({r.name})" if r.name and r.name != str(r.uri) else "")
            for r in listed[:SHOWN_IN_DESCRIPTION]
        ]
        more = len(listed) - len(shown)
        tail = f"; and {more} more" if more > 0 else ""
        lines.append(f"- {server}: " + ("; ".join(shown) or "(none listed)") + tail)
    return "\n".join(lines)


class ResourceSource(ToolSource):
    """The read tool, over the servers that offer resources."""

    name = "mcp:resources"
    kind = "mcp-resources"

    def __init__(self, servers: list[Any]) -> None:
        super().__init__()
        self.catalogs = {server.config.name: server.catalog for server in servers}
        for catalog in self.catalogs.values():
            catalog.source = self
        self.changed = True  # listed once the servers have started
        self._tool: ReadResource | None = None

    async def refresh(self) -> None:
        self.changed = False
        offering = {name: c for name, c in self.catalogs.items() if c.offered}
        if not offering:
            self._tool = None
            return
        listed = await asyncio.gather(*(c.listing() for c in offering.values()))
        self._tool = ReadResource(offering, dict(zip(offering, listed, strict=True)))

    def tools(self) -> list[Tool]:
        return [self._tool] if self._tool is not None else []
