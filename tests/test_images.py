"""The parts of images-to-the-model (the end-to-end tests are tests/test_e2e_images.py):
what counts as an image, what may go to a model, how many go in one request, and the
configuration defaults written out for `--help`."""

from __future__ import annotations

import base64

from agentcli.agent.request_images import images_for_request
from agentcli.config.schema import SETTINGS
from agentcli.conversation import images
from agentcli.conversation.images import ImagePart, admit, admit_all, describe, image_type
from agentcli.conversation.messages import Message

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 "


def part(data: bytes, mime: str = "image/png") -> ImagePart:
    return ImagePart(base64.b64encode(data).decode(), mime)


def test_the_configuration_defaults_are_the_module_s() -> None:
    assert SETTINGS["images.max_bytes"].default == images.DEFAULT_MAX_BYTES
    assert SETTINGS["images.max_per_request"].default == images.DEFAULT_MAX_PER_REQUEST
    assert images.DEFAULT_MAX_BYTES * 4 // 3 == 5 * 1024 * 1024  # Anthropic's base64 limit


def test_the_type_comes_from_the_bytes() -> None:
    assert image_type(PNG) == "image/png"
    assert image_type(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert image_type(b"GIF89a") == "image/gif"
    assert image_type(WEBP) == "image/webp"
    assert image_type(b"RIFF\x10\x00\x00\x00WAVE") is None  # RIFF, but audio
    assert image_type(b"<svg xmlns=") is None


def test_admit_checks_size_base64_and_type_and_corrects_the_label() -> None:
    assert admit(part(PNG), 100) == (part(PNG), "")
    assert admit(part(PNG, "image/jpeg"), 100) == (part(PNG), "")
    assert "over images.max_bytes (10 B)" in admit(part(PNG), 10)[1]
    assert "not valid base64" in admit(ImagePart("!!!!", "image/png"), 100)[1]
    assert "not a PNG, JPEG, GIF or WebP" in admit(part(b"<svg/>", "image/svg+xml"), 100)[1]


def test_a_refused_image_is_noted_in_its_own_place() -> None:
    good, bad = part(PNG), part(b"<svg/>", "image/svg+xml")
    content = f"a\n{describe(good)}\nb\n{describe(bad)}\nc"
    admitted, noted = admit_all([good, bad], content, 100)
    assert admitted == [good]
    assert noted.splitlines() == [
        "a",
        describe(good),
        "b",
        describe(bad, "not sent to the model: not a PNG, JPEG, GIF or WebP image"),
        "c",
    ]


def test_a_request_carries_the_latest_images_and_none_for_a_text_only_model() -> None:
    first = Message.user("one", [part(PNG), part(PNG + b"1")])
    second = Message.user("two", [part(PNG + b"2")])
    conversation = [first, second]

    fitted = images_for_request(conversation, takes_images=True, limit=2)
    assert fitted[1] is second and fitted[0].images == [part(PNG + b"1")]
    assert "1 image(s) of this message left out" in fitted[0].content
    assert first.images == [part(PNG), part(PNG + b"1")]  # the conversation keeps them

    text_only = images_for_request(conversation, takes_images=False)
    assert [m.images for m in text_only] == [[], []]
    assert [m.content for m in text_only] == ["one", "two"]  # their descriptions, as they are


def test_a_user_message_s_images_in_each_wire_form() -> None:
    from agentcli.providers import anthropic, openai

    image = part(PNG)
    message = Message.user("look", [image])
    [user] = openai.to_wire_messages("", [message])
    assert user["content"] == [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{image.data}"}},
    ]
    [turn] = anthropic.to_wire_messages([message])
    assert turn["content"] == [
        {"type": "text", "text": "look"},
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": image.data},
        },
    ]
