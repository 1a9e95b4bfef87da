"""A served thread's run plans only the client messages that follow what its last run
planned (agentcli.agui.threads.ClientLead), and the plan is always the one planning the
client's whole history would give: over random runs of clients that send their history
again, edit it, rename it, answer frontend calls and add context, and threads that are
rewound or read anew."""

from __future__ import annotations

from ag_ui.core import AssistantMessage, FunctionCall, SystemMessage, ToolMessage, UserMessage
from ag_ui.core import ToolCall as SdkCall
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli.agui.threads import ClientLead, client_keys, plan_run, same_history
from agentcli.conversation.messages import Conversation, Message, ToolCall

SERVER_TOOLS = {"read_file"}
STEPS = [
    *("user", "system", "frontend", "edit", "rename", "renamelast"),
    *("short", "rewind", "swap", "reread"),
]


def _plan_view(plan) -> dict:
    return {
        "messages": [(m.role, m.id, m.content) for m in plan.messages],
        "results": [(m.tool_call_id, m.content) for m in plan.results],
        "notes": plan.notes,
        "unkept": plan.unkept,
        "approved": [c.id for c in plan.approved_calls],
    }


class Client:
    """A page's messages, as the SDK's objects (sent again as the same objects, as
    agentcli.agui.run_inputs gives them for a lead it has validated before)."""

    def __init__(self) -> None:
        self.messages: list = []
        self.count = 0

    def new_id(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"


def _answer(conversation: Conversation, client: Client, frontend: bool) -> None:
    """The model's turn: an answer, sometimes a call of the page's own tool; the client
    gets it (as events or a snapshot give it)."""
    calls = [ToolCall(id=client.new_id("call"), name="pick", arguments="{}")] if frontend else []
    message = Message(role="assistant", content="ok", tool_calls=calls)
    conversation.add(message)
    sdk_calls = [
        SdkCall(id=c.id, function=FunctionCall(name=c.name, arguments=c.arguments)) for c in calls
    ]
    client.messages.append(
        AssistantMessage(id=message.id, content="ok", tool_calls=sdk_calls or None)
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(STEPS), st.booleans()), min_size=1, max_size=25))
def test_a_plan_from_the_lead_is_the_plan_of_the_whole_history(steps):
    conversation, client, lead = Conversation(), Client(), ClientLead()
    for step, flag in steps:
        if step == "system":
            client.messages.append(SystemMessage(id=client.new_id("s"), content="be brief"))
        elif step == "frontend":
            pending = [
                c.id for m in client.messages if m.role == "assistant" for c in m.tool_calls or []
            ]
            if pending:
                call = pending[-1]
                client.messages.append(
                    ToolMessage(id=client.new_id("t"), tool_call_id=call, content="blue")
                )
        elif step == "edit" and client.messages:  # an earlier message edited: new objects
            first = client.messages[0]
            client.messages[0] = first.model_copy(update={"content": "edited"})
        elif step == "rename" and client.messages:
            client.messages = [m.model_copy(update={"id": f"r-{m.id}"}) for m in client.messages]
        elif step == "renamelast" and client.messages:  # the page's copy of the last answer
            last = client.messages[-1]
            client.messages[-1] = last.model_copy(update={"id": f"r-{last.id}"})
        elif step == "short" and client.messages:
            client.messages = client.messages[1:]
        elif step == "rewind" and conversation.messages:
            del conversation.messages[-1:]
        elif step == "swap" and conversation.messages:  # replaced in place: same length
            swapped = [Message.user("another's"), Message(role="assistant", content="swapped")]
            conversation.messages[-2:] = swapped
        elif step == "reread":  # the thread read anew from its file: another conversation
            conversation = Conversation(list(conversation.messages))
        client.messages.append(UserMessage(id=client.new_id("u"), content=f"question {step}"))
        sent = list(client.messages)
        whole = plan_run(conversation, sent, SERVER_TOOLS)
        planned = plan_run(conversation, sent, SERVER_TOOLS, lead)
        assert _plan_view(planned) == _plan_view(whole)
        for message in [*planned.results, *planned.messages]:
            conversation.add(message)
        keys = lead.keys(sent, planned.planned)
        assert keys == client_keys(sent)
        thread_keys = conversation.indexed().keys
        same = same_history(sent, conversation.messages, set(), thread_keys)
        matched = lead.matched(planned.planned)
        assert same_history(sent, conversation.messages, set(), thread_keys, keys, matched) == same
        lead.record(conversation, sent, planned, keys, same)
        _answer(conversation, client, frontend=flag)


def _question(conversation: Conversation, client: Client, lead: ClientLead, text: str):
    """One run of a client that sends its whole history and a new question."""
    client.messages.append(UserMessage(id=client.new_id("u"), content=text))
    sent = list(client.messages)
    plan = plan_run(conversation, sent, SERVER_TOOLS, lead)
    for message in plan.messages:
        conversation.add(message)
    keys = lead.keys(sent, plan.planned)
    same = same_history(sent, conversation.messages, set(), conversation.indexed().keys, keys)
    lead.record(conversation, sent, plan, keys, same)
    _answer(conversation, client, frontend=False)
    return plan, sent


def test_a_client_sending_its_history_again_is_planned_for_what_it_added():
    conversation, client, lead = Conversation(), Client(), ClientLead()
    for n in range(50):
        plan, sent = _question(conversation, client, lead, f"q{n}")
        assert plan.planned == (len(sent) - 2 if n else 0)  # all but its answer and the new one
        assert [m.content for m in plan.messages] == [f"q{n}"]


def test_a_thread_rewound_or_read_anew_is_planned_whole():
    conversation, client, lead = Conversation(), Client(), ClientLead()
    for n in range(3):
        _question(conversation, client, lead, f"q{n}")
    sent = [*client.messages, UserMessage(id="u-last", content="again")]
    assert plan_run(conversation, sent, SERVER_TOOLS, lead).planned == len(sent) - 2
    reread = Conversation(list(conversation.messages))
    assert plan_run(reread, sent, SERVER_TOOLS, lead).planned == 0
    del conversation.messages[2:]  # rewound: the questions after the first are new again
    plan = plan_run(conversation, sent, SERVER_TOOLS, lead)
    assert plan.planned == 0
    assert [m.content for m in plan.messages] == ["q1", "q2", "again"]
