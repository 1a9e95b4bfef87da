"""The environment a child process gets: an allow-list, never anything that looks like a
secret unless named explicitly, and never a provider's API key."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

ALLOWED = ("HOME", "PATH", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "SHELL", "TZ")
PROVIDER_KEYS = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY"})
_SECRET_LOOKING = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)

# Nothing a child runs may stop to wait for a person: no pager, no editor.
NON_INTERACTIVE = {
    "PYTHONIOENCODING": "utf-8",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": "true",
    "GIT_TERMINAL_PROMPT": "0",
}


def looks_secret(name: str) -> bool:
    return bool(_SECRET_LOOKING.search(name))


def child_environment(
    extra_names: Iterable[str] = (),
    *,
    provider_keys: Iterable[str] = (),
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """`extra_names` are names the user passed explicitly (configuration): they pass even
    when they look like secrets — except provider keys, which never do."""
    source = os.environ if source is None else source
    never = PROVIDER_KEYS | set(provider_keys)
    env = {name: source[name] for name in ALLOWED if name in source}
    for name in extra_names:
        if name in source and name not in never:
            env[name] = source[name]
    env.update(NON_INTERACTIVE)
    return env
