"""Errors that end a command, each with its exit code and a one-line message for the user."""

from __future__ import annotations

from collections.abc import Callable


class ExitCode:
    """The documented exit codes (README, "Exit codes")."""

    OK = 0
    FAILURE = 1  # provider error after retries, stream cut, internal error
    USAGE = 2  # bad flag, missing prompt, bad configuration
    LIMIT = 3  # step limit or --timeout reached before the model finished
    DENIED = 4  # finished, but a tool call was refused (policy, hook, allowed-tools, subagent)
    HANGUP = 129  # SIGHUP: the terminal was closed
    INTERRUPTED = 130  # Ctrl-C
    OUTPUT_CLOSED = 141  # stdout's reader went away; agentcli ends by SIGPIPE
    TERMINATED = 143  # SIGTERM


class AgentCliError(Exception):
    """An error the user can act on; `str(error)` is the whole message."""

    exit_code = ExitCode.FAILURE
    code = "error"  # machine-readable code for RUN_ERROR events


class UsageError(AgentCliError):
    exit_code = ExitCode.USAGE
    code = "usage"


class ConfigError(AgentCliError):
    exit_code = ExitCode.USAGE
    code = "config"


class ProviderError(AgentCliError):
    """The model provider failed: an HTTP error, a refused connection, a broken stream."""

    code = "provider"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        detail: str = "",
    ):
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.detail = detail  # the server's own words for an HTTP error, when there was one


class StreamCutError(ProviderError):
    code = "stream_cut"


def print_error(message: str) -> None:
    import sys

    from agentcli.output.visible import one_line
    from agentcli.output.wrapping import for_stream

    line = f"agentcli: error: {one_line(message)}"  # it may quote a server
    sys.stderr.write(for_stream(line, sys.stderr) + "\n")
    sys.stderr.flush()


def last_net(call: Callable[[], int], argv: list[str]) -> int:
    """Runs a command parsed without Typer and ends it as Typer's path ends one: a Ctrl-C
    is exit 130, end of input "interrupted", a closed stdout 1, and a bug one line (the
    traceback only with --debug)."""
    import errno
    import os
    import sys

    try:
        return call()
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except EOFError:
        sys.stderr.write("\nagentcli: interrupted\n")
        return ExitCode.INTERRUPTED
    except OSError as error:
        if error.errno != errno.EPIPE:
            return internal_error(error, argv)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush
        return ExitCode.FAILURE
    except Exception as bug:
        return internal_error(bug, argv)


def internal_error(bug: Exception, argv: list[str]) -> int:
    import sys

    if "--debug" in argv:
        raise bug  # the traceback, as asked
    sys.stderr.write(
        f"agentcli: error: internal error: {type(bug).__name__}: {bug} "
        "(rerun with --debug for the traceback)\n"
    )
    return ExitCode.FAILURE
