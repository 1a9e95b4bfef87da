// Drives `agentcli serve` with @ag-ui/client's HttpAgent (a peer nobody here wrote).
// node http_agent.cjs URL  → prints one JSON object: per scenario, the events the client
// saw, its messages afterwards (and its messages and state after each run), any error it
// raised, and the thread's messages as a reloaded HttpAgent is then sent them (`thread`: the
// MESSAGES_SNAPSHOT that starts a run sending only a new message, that message left out).
// NODE_PATH names the node_modules.
const { HttpAgent } = require("@ag-ui/client");

const url = process.argv[2];
// agentcli serve requires its token by default (as notebook servers do).
const headers = process.argv[3] ? { Authorization: `Bearer ${process.argv[3]}` } : {};
const PICK_COLOR = {
  name: "pick_color",
  description: "Ask the user to pick a colour in the page",
  parameters: {
    type: "object",
    properties: { prompt: { type: "string" } },
    required: ["prompt"],
  },
};
const CONFIRM = {
  name: "confirm_tool_call",
  description: "Ask the user to approve a tool call",
  parameters: { type: "object", properties: {} },
};

async function run(agent, params, seen, after) {
  const failures = [];
  await agent.runAgent(params, {
    onEvent: ({ event }) => { seen.push(event); },
    onRunFailed: ({ error }) => { failures.push(String(error)); },
  }).catch((error) => failures.push(String(error)));
  if (after) after.push({ messages: structuredClone(agent.messages), state: structuredClone(agent.state) });
  return failures;
}

function lastCall(agent, name) {
  for (const message of [...agent.messages].reverse()) {
    for (const call of message.toolCalls || []) {
      if (call.function.name === name) return call;
    }
  }
  return null;
}

// The thread's messages as a page that reloaded sees them: its run (one new message) starts
// with the thread's messages. Costs the thread one turn, so it is each scenario's last run.
async function threadSeen(threadId) {
  const probe = new HttpAgent({ url, threadId, headers });
  probe.addMessage({ id: `${threadId}-probe`, role: "user", content: "what is there?" });
  const events = [];
  const failures = await run(probe, { runId: `${threadId}-probe` }, events, null);
  const first = events.find((event) => event.type === "MESSAGES_SNAPSHOT");
  const messages = first ? first.messages.filter((m) => m.id !== `${threadId}-probe`) : null;
  return { messages, failures };
}

async function scenario(threadId, tools, answer) {
  const agent = new HttpAgent({ url, threadId, headers });
  agent.addMessage({ id: `${threadId}-u1`, role: "user", content: "hello" });
  const runs = [];
  const events = [];
  const after = [];
  runs.push(await run(agent, { runId: `${threadId}-r1`, tools }, events, after));
  if (answer) {
    const call = lastCall(agent, answer.tool);
    if (call) {
      agent.addMessage({
        id: `${threadId}-t1`, role: "tool", toolCallId: call.id, content: answer.content,
      });
      runs.push(await run(agent, { runId: `${threadId}-r2`, tools }, events, after));
    } else {
      runs.push([`no ${answer.tool} call in the client's messages`]);
    }
  }
  const thread = await threadSeen(threadId);
  return {
    events, messages: agent.messages, after, failures: [...runs.flat(), ...thread.failures],
    thread: thread.messages,
  };
}

// State and snapshots: a page whose state the agent changes, then the same thread from a
// page that reloaded (no messages, no state): the server sends it both.
async function stateScenario(threadId) {
  const events = [];
  const after = [];
  const page = new HttpAgent({ url, threadId, headers, initialState: { items: [] } });
  page.addMessage({ id: `${threadId}-u1`, role: "user", content: "add milk" });
  const forwardedProps = { page: "shopping-list" };
  const failures = await run(page, { runId: `${threadId}-r1`, forwardedProps }, events, after);
  const reloaded = new HttpAgent({ url, threadId, headers });
  reloaded.addMessage({ id: `${threadId}-u2`, role: "user", content: "what is on the list?" });
  failures.push(...await run(reloaded, { runId: `${threadId}-r2` }, events, after));
  const thread = await threadSeen(threadId);
  failures.push(...thread.failures);
  return { events, messages: reloaded.messages, after, failures, thread: thread.messages };
}

(async () => {
  const result = {
    text: await scenario("js-text", []),
    frontend: await scenario("js-fe", [PICK_COLOR], { tool: "pick_color", content: "blue" }),
    confirm: await scenario("js-confirm", [CONFIRM], {
      tool: "confirm_tool_call", content: JSON.stringify({ approved: true }),
    }),
    state: await stateScenario("js-state"),
  };
  process.stdout.write(JSON.stringify(result));
})().catch((error) => { console.error(error); process.exit(1); });
