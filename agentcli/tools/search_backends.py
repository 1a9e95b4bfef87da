"""Web search backends, chosen in the configuration:

[web_search]
backend = "searxng"                 # a SearXNG instance (its JSON API must be enabled)
url = "http://127.0.0.1:8888"

[web_search]
backend = "brave"                   # the Brave Search API
api_key_env = "BRAVE_API_KEY"       # the variable holding the key
"""

from __future__ import annotations

import os
from typing import Any

from agentcli.records import dataclass
from agentcli.tools.base import ToolFailure

HOW_TO = (
    "no web search backend is configured; set one in the configuration, e.g. "
    "`agentcli config set web_search.backend searxng` and "
    "`agentcli config set web_search.url http://127.0.0.1:8888` (a SearXNG instance), or "
    "backend brave with web_search.api_key_env naming the variable that holds the key"
)
BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"


@dataclass(frozen=True, slots=True)
class SearchResult:
    title: str
    url: str
    snippet: str


async def search(backend: dict[str, Any], query: str, limit: int) -> list[SearchResult]:
    kind = backend.get("backend")
    if not kind:
        raise ToolFailure(HOW_TO)
    if kind == "searxng":
        return await _searxng(backend, query, limit)
    if kind == "brave":
        return await _brave(backend, query, limit)
    raise ToolFailure(f"unknown web_search.backend {kind!r}; use searxng or brave")


async def _get_json(url: str, params: dict[str, str], headers: dict[str, str]) -> Any:
    import httpx

    try:
        async with httpx.AsyncClient(timeout=20.0, trust_env=False) as client:
            response = await client.get(url, params=params, headers=headers)
    except httpx.HTTPError as exc:
        raise ToolFailure(f"the search backend at {url} did not answer: {exc}") from None
    if response.status_code != 200:
        raise ToolFailure(f"the search backend answered HTTP {response.status_code}")
    try:
        data = response.json()
    except ValueError:
        raise ToolFailure("the search backend did not answer with JSON") from None
    if not isinstance(data, dict):
        raise ToolFailure("the search backend's answer is not a JSON object; check its URL")
    return data


async def _searxng(backend: dict[str, Any], query: str, limit: int) -> list[SearchResult]:
    base = backend.get("url")
    if not base:
        raise ToolFailure("web_search.backend is searxng but web_search.url is not set")
    data = await _get_json(f"{str(base).rstrip('/')}/search", {"q": query, "format": "json"}, {})
    return [
        SearchResult(str(r.get("title", "")), str(r.get("url", "")), str(r.get("content", "")))
        for r in _items(data.get("results"))[:limit]
    ]


async def _brave(backend: dict[str, Any], query: str, limit: int) -> list[SearchResult]:
    variable = backend.get("api_key_env") or "BRAVE_API_KEY"
    key = os.environ.get(variable)
    if not key:
        raise ToolFailure(f"web_search uses Brave, but {variable} is not set")
    data = await _get_json(
        backend.get("url") or BRAVE_URL,
        {"q": query, "count": str(limit)},
        {"X-Subscription-Token": key, "Accept": "application/json"},
    )
    web = data.get("web")
    results = _items(web.get("results") if isinstance(web, dict) else None)
    return [
        SearchResult(str(r.get("title", "")), str(r.get("url", "")), str(r.get("description", "")))
        for r in results[:limit]
    ]


def _items(value: Any) -> list[dict[str, Any]]:
    """The result objects of a backend's list, ignoring anything malformed."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
