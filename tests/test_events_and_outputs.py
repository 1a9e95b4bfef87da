"""Event wire form and the text outputs."""

from __future__ import annotations

import io

from rich.console import Console

from agentcli.conversation import events as ev
from agentcli.output.style import format_arguments
from agentcli.output.text import TextOutput
from agentcli.ui.markdown_stream import MarkdownStream


def test_wire_form_is_camel_case_and_omits_unset_fields():
    wire = ev.ToolCallStart(tool_call_id="c", tool_call_name="read_file", timestamp=5).to_wire()
    assert wire == {
        "type": "TOOL_CALL_START",
        "timestamp": 5,
        "toolCallId": "c",
        "toolCallName": "read_file",
    }
    usage = ev.Usage(3, 4).to_wire("openai", "m")
    assert usage == {
        "provider": "openai",
        "model": "m",
        "inputTokens": 3,
        "outputTokens": 4,
        "totalTokens": 7,
    }


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_piped_text_is_plain_and_tool_activity_goes_to_stderr():
    out, err = io.StringIO(), FakeTTY()
    text = TextOutput(out, err, markdown=False)
    text.handle(ev.TextMessageStart(message_id="m"))
    text.handle(ev.TextMessageContent(message_id="m", delta="**bold** answer"))
    text.handle(ev.TextMessageEnd(message_id="m"))
    text.handle(ev.ToolCallStart(tool_call_id="c", tool_call_name="read_file"))
    text.handle(ev.ToolCallArgs(tool_call_id="c", delta='{"path": "a.txt"}'))
    text.handle(ev.ToolCallEnd(tool_call_id="c"))
    text.handle(
        ev.ToolCallResult(
            message_id="r",
            tool_call_id="c",
            content="x",
            metadata={"error": "no such file: a.txt", "latencyMs": 1},
        )
    )
    assert out.getvalue() == "**bold** answer\n"
    assert "read_file" in err.getvalue() and "no such file: a.txt" in err.getvalue()


def test_format_arguments_is_short_and_survives_bad_json():
    assert format_arguments('{"path": "a", "limit": 3}') == 'path="a" limit=3'
    assert format_arguments('{"path": "a"') == '{"path": "a"'
    assert len(format_arguments('{"x": "' + "y" * 500 + '"}')) == 160


def render(chunks: list[str]) -> tuple[str, list[str]]:
    """What the stream has printed for good after each chunk, and in the end (a console
    that is no terminal gets no live region: only final blocks)."""
    console = Console(file=io.StringIO(), force_terminal=False, width=60, color_system=None)
    stream = MarkdownStream(console)
    during: list[str] = []
    for piece in chunks:
        stream.feed(piece)
        during.append(console.file.getvalue())
    stream.close()
    return console.file.getvalue(), during


def test_completed_blocks_print_once_before_the_answer_ends():
    final, during = render(["# Title\n", "\n", "First para", "graph.\n\n", "Second ", "one."])
    assert during[0] == "" and "Title" in during[1]  # printed once its blank line arrived
    assert during[2] == during[1]  # an open paragraph is not printed
    assert during[3].endswith("\n\nFirst paragraph.\n")  # one blank line between blocks
    assert final == during[3] + "\nSecond one.\n"  # each block exactly once


def test_blank_lines_inside_a_code_fence_do_not_split_it():
    final, during = render(["```python\n", "a = 1\n", "\n", "b = 2\n", "```\n", "after"])
    assert during[3] == ""  # the fence is still open
    code = [line.strip() for line in during[4].splitlines()]
    assert code == ["a = 1", "", "b = 2"]
    assert final == during[4] + "\nafter\n"
