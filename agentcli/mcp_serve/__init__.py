"""`agentcli mcp serve`: agentcli's tools lent to another agent over MCP (stdio, or
streamable HTTP on loopback with a token), under the same policy, boundary and sandbox as a
run. A front end like `serve`: it asks the composition root (agentcli.assembly.session)
for its parts and its session, and every call goes through the session's executor.

The parts: what the tools look like to a client and what their results carry
(lending.py), how a call that would ask is put to the client (asking.py), the SDK's server
and its transports (server.py), and the checks of the HTTP endpoint (endpoint.py)."""
