"""`agentcli models`: the models the configured providers offer, one per line as
`--model` takes them; a provider that could not be asked is one error line on stderr."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from agentcli.config import load_config
from agentcli.errors import ExitCode
from agentcli.output.visible import one_line, visible_json
from agentcli.providers.catalog import gather_offers, providers_to_ask


def list_models(
    workspace: Path, base_url: str | None, as_json: bool, env: Mapping[str, str] = os.environ
) -> int:
    config = load_config(workspace, env=env)
    offers = asyncio.run(gather_offers(providers_to_ask(config, env, base_url), config, env))
    if as_json:
        document = {"providers": [offer.to_wire() for offer in offers]}
        sys.stdout.write(visible_json(document, indent=2) + "\n")
    else:
        rows = [
            (one_line(f"{o.provider.name}:{m.id}"), one_line(m.detail))  # the server's names
            for o in offers
            for m in o.models
        ]
        width = max((len(spec) for spec, _ in rows), default=0)
        for spec, detail in rows:
            sys.stdout.write(f"{spec:<{width}}  {detail}".rstrip() + "\n")
    for offer in offers:
        url = offer.provider.base_url
        if offer.error is not None:
            sys.stderr.write(f"agentcli: error: {one_line(offer.error)}\n")
        elif not offer.models:
            where = f" ({url})" if url else ""
            sys.stderr.write(f"agentcli: {one_line(offer.provider.name + where)} lists no models\n")
    return ExitCode.FAILURE if any(o.error is not None for o in offers) else ExitCode.OK
