"""Errors that end a command, each with its exit code and a one-line message for the user."""

from __future__ import annotations


class ExitCode:
    """The documented exit codes (README, "Exit codes")."""

    OK = 0
    FAILURE = 1  # provider error after retries, stream cut, internal error
    USAGE = 2  # bad flag, missing prompt, bad configuration
    LIMIT = 3  # step limit or --timeout reached before the model finished
    DENIED = 4  # finished, but at least one tool call was denied by policy
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

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False):
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class StreamCutError(ProviderError):
    code = "stream_cut"
