"""AG-UI both ways: `agentcli serve` (frontends drive agentcli over HTTP) and `--agent URL`
(agentcli drives a remote AG-UI agent with its own tools). Needs `agentcli[serve]` to serve."""
