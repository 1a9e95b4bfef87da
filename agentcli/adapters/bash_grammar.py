"""The bash grammar of tree-sitter-bash, loaded from the package's compiled module without
running the package's `__init__`, which imports importlib.resources (and with it tempfile,
about 6 ms of every policy decision) only to offer its highlighting query. Any surprise in
the package's layout falls back to the plain import."""

from __future__ import annotations

from typing import Any

COMPILED_MODULE = "tree_sitter_bash._binding"


def bash_language() -> Any:
    """What tree_sitter.Language takes: the grammar's language pointer."""
    try:
        from importlib.machinery import PathFinder
        from importlib.util import module_from_spec

        package = PathFinder.find_spec("tree_sitter_bash")
        spec = PathFinder.find_spec(COMPILED_MODULE, package.submodule_search_locations)
        binding = module_from_spec(spec)
        spec.loader.exec_module(binding)
        return binding.language()
    except Exception:
        import tree_sitter_bash

        return tree_sitter_bash.language()
