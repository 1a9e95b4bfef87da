"""agentcli: a command-line agent shell."""

__version__ = "0.1.0"
