"""Images in the conversation: the part that carries one, what counts as an image (by its
bytes, never its name or a server's word), and whether one may go to a model.

An image a model may see is one of the four formats both OpenAI-compatible and Anthropic
APIs take (PNG, JPEG, GIF, WebP), within `images.max_bytes`. Any other image stays its
text description (`[image: image/png, 4 KB]`), with a note saying why it was not sent."""

from __future__ import annotations

from agentcli.records import dataclass

# Anthropic refuses an image whose base64 is over 5 MiB: 3.75 MiB of bytes. OpenAI takes
# more; the default is the limit both take.
DEFAULT_MAX_BYTES = 5 * 1024 * 1024 * 3 // 4
DEFAULT_MAX_PER_REQUEST = 20  # Anthropic takes 100 a request; each costs ~1,600 tokens
SNIFF_BYTES = 12  # enough for every signature below


@dataclass(frozen=True, slots=True)
class ImagePart:
    data: str  # base64, as MCP and the providers carry images
    mime_type: str

    @property
    def size(self) -> int:
        """Decoded bytes, without decoding: 3 bytes per 4 characters, less the padding."""
        return len(self.data) * 3 // 4 - self.data[-2:].count("=")

    def digest(self) -> str:
        """The SHA-256 of the image's bytes: its name where the session stores it."""
        import base64
        import hashlib

        return hashlib.sha256(base64.b64decode(self.data)).hexdigest()

    @classmethod
    def sniffed(cls, data: str, claimed: str) -> ImagePart:
        """An image from outside (an MCP server's), typed by its bytes when they are a
        PNG, JPEG, GIF or WebP: a server that labels a PNG `image/jpeg` is not repeated
        anywhere (descriptions, the session, the model). Else the type it was given."""
        import base64
        import binascii

        try:
            head = base64.b64decode(data[:16], validate=True)[:SNIFF_BYTES]  # 16 chars: 12 bytes
        except (binascii.Error, ValueError):
            return cls(data, claimed)  # not base64: admit() says so, by its claimed type
        return cls(data, image_type(head) or claimed)

    @classmethod
    def of_bytes(cls, data: bytes, mime_type: str) -> ImagePart:
        import base64

        return cls(base64.b64encode(data).decode("ascii"), mime_type)


def image_type(head: bytes) -> str | None:
    """The MIME type of an image a model can take, from its first bytes; None otherwise."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def describe(part: ImagePart, note: str = "") -> str:
    """The text a model that does not see the image gets, and what the terminal shows."""
    shown = f"[image: {part.mime_type or 'unknown type'}, {human_size(part.size)}"
    return shown + (f"; {note}]" if note else "]")


def admit(part: ImagePart, max_bytes: int) -> tuple[ImagePart | None, str]:
    """(the image as a model may get it, "") or (None, why not). The type is read from the
    bytes: a server's mislabelled PNG goes as the PNG it is."""
    import base64
    import binascii  # base64 (and binascii) only here: `--help` reads the defaults above

    if part.size > max_bytes:
        return None, f"not sent to the model: over images.max_bytes ({human_size(max_bytes)})"
    try:
        head = base64.b64decode(part.data[:64], validate=True)[:SNIFF_BYTES]
        base64.b64decode(part.data, validate=True)
    except (binascii.Error, ValueError):
        return None, "not sent to the model: its data is not valid base64"
    kind = image_type(head)
    if kind is None:
        return None, "not sent to the model: not a PNG, JPEG, GIF or WebP image"
    return (part if kind == part.mime_type else ImagePart(part.data, kind)), ""


def admit_all(images: list[ImagePart], content: str, max_bytes: int) -> tuple[list[ImagePart], str]:
    """The images a model may get, and `content` (their text rendering among the rest)
    with each refused image's description saying why, in the image's own place."""
    admitted: list[ImagePart] = []
    cursor = 0
    for part in images:
        image, why = admit(part, max_bytes)
        shown = describe(part)
        at = content.find(shown, cursor)
        if image is not None:
            admitted.append(image)
            cursor = at + len(shown) if at >= 0 else cursor
            continue
        noted = describe(part, why)
        if at < 0:
            content = f"{content}\n{noted}" if content else noted
            continue
        content = content[:at] + noted + content[at + len(shown) :]
        cursor = at + len(noted)
    return admitted, content
