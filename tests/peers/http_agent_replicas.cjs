// Drives agentcli serve replicas behind HAProxy with @ag-ui/client's HttpAgent: one thread,
// three text runs, then a write_file approval asked and answered (confirm_tool_call).
// node http_agent_replicas.cjs URL TOKEN → one JSON object: the replica that served each
// run (HAProxy's X-Replica header, seen by wrapping fetch), the client's messages at the
// end, and any failure. NODE_PATH names the node_modules.
const { HttpAgent } = require("@ag-ui/client");

const [url, token] = process.argv.slice(2);
const replicas = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (...args) => {
  const response = await realFetch(...args);
  replicas.push(response.headers.get("x-replica"));
  return response;
};
const CONFIRM = {
  name: "confirm_tool_call",
  description: "Ask the user to approve a tool call",
  parameters: { type: "object", properties: {} },
};

async function main() {
  const failures = [];
  const agent = new HttpAgent({ url, threadId: "js-hop", headers: { Authorization: `Bearer ${token}` } });
  const run = async (runId) => {
    await agent.runAgent({ runId, tools: [CONFIRM] }, {
      onRunFailed: ({ error }) => { failures.push(String(error)); },
    }).catch((error) => failures.push(String(error)));
  };
  for (let turn = 0; turn < 4; turn++) {
    agent.addMessage({ id: `js-u${turn}`, role: "user", content: `turn ${turn}` });
    await run(`js-r${turn}`);
  }
  let confirm = null;
  for (const message of agent.messages) {
    for (const call of message.toolCalls || []) {
      if (call.function.name === "confirm_tool_call") confirm = call;
    }
  }
  if (!confirm) failures.push("no confirm_tool_call in the client's messages");
  else {
    agent.addMessage({ id: "js-t1", role: "tool", toolCallId: confirm.id, content: '{"approved": true}' });
    await run("js-r4");
  }
  process.stdout.write(JSON.stringify({ failures, replicas, messages: agent.messages }));
}

main().catch((error) => { process.stderr.write(String(error.stack || error)); process.exit(1); });
