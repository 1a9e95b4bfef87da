"""The usage errors of the click that typer runs on. Typer vendors click (`typer._click`,
since 0.20) and exports none of its exceptions but BadParameter; older typers use the click
package itself."""

from __future__ import annotations

from types import ModuleType


def click_exceptions() -> ModuleType:
    """The module holding UsageError, NoArgsIsHelpError and ClickException."""
    try:
        from typer._click import exceptions
    except ImportError:  # typer versions that use the click package itself
        import click.exceptions as exceptions  # type: ignore[no-redef]
    return exceptions
