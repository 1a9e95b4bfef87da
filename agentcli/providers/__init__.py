"""Model providers: each turns one wire protocol into agentcli's event stream."""
