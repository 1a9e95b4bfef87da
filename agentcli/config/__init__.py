"""Configuration: TOML files (user and project), environment variables and flags, resolved
into one view that every part of agentcli reads. Precedence: flags > environment >
project > user > defaults. An untrusted project file may not loosen anything."""

from agentcli.config.resolve import Config, load_config

__all__ = ["Config", "load_config"]
