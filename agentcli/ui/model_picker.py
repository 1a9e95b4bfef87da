"""`/model` with no argument: the models the configured providers list (what `agentcli
models` shows), in a picker that starts on the model in use; the choice is switched to."""

from __future__ import annotations

import os
from typing import Any

from agentcli.errors import ConfigError
from agentcli.output.visible import one_line


async def choose_model(settings: Any, say: Any) -> str | None:
    """`PROVIDER:MODEL` as chosen, or None (cancelled, or nothing to choose from: `say`
    has said why). `settings`: the REPL's, whose provider (with a --base-url given for
    it) is asked along with every other provider that is set up."""
    from agentcli.providers.catalog import gather_offers, providers_to_ask
    from agentcli.ui.picker import pick

    config, current = settings.config, settings.provider
    try:
        providers = providers_to_ask(config, os.environ, None)
    except ConfigError:
        providers = []
    providers = [p for p in providers if p.name != current.name]
    offers = await gather_offers([current, *providers], config, os.environ)
    for offer in offers:
        if offer.error is not None:
            say(f"  could not list {one_line(offer.error)}")
    model = str(settings.model)
    rows = [(f"{o.provider.name}:{m.id}", m.detail) for o in offers for m in o.models]
    if not rows:
        say(f"model: {model}; no provider listed any model (/model PROVIDER:MODEL switches)")
        return None
    names = [name for name, _ in rows]
    shown = [
        (one_line(name), "in use" if name == model else one_line(detail)) for name, detail in rows
    ]
    start = names.index(model) if model in names else 0
    index = await pick(f"Model (now {one_line(model)})", shown, start=start, action="switches")
    if index is None:
        say("(cancelled)")
        return None
    return names[index]
