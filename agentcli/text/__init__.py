"""Text at agentcli's edges: decoding and counted words."""
