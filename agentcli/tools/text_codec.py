"""Decoding a text file so that an edit can write it back byte-for-byte unchanged apart
from the edit: the same encoding (and BOM), the same line endings."""

from __future__ import annotations

from agentcli.records import dataclass
from agentcli.tools.base import ToolFailure

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


@dataclass(frozen=True, slots=True)
class DecodedText:
    text: str
    encoding: str
    crlf: bool  # the file uses Windows line endings
    bom: bytes = b""

    def encode(self, text: str) -> bytes:
        try:
            return self.bom + text.encode(self.encoding)
        except UnicodeEncodeError as exc:
            bad = text[exc.start : exc.end]
            raise ToolFailure(
                f"the new text has characters ({bad!r}) that this file's encoding "
                f"({self.encoding}) cannot hold"
            ) from None

    def to_file_newlines(self, text: str) -> str:
        """Model text uses \\n; a CRLF file gets \\r\\n (text already in CRLF is left alone)."""
        if self.crlf and "\r\n" not in text:
            return text.replace("\n", "\r\n")
        return text


def decode_text(data: bytes, shown: str) -> DecodedText:
    bom = b""
    for marker, encoding in _BOMS:
        if data.startswith(marker):
            bom = marker
            try:
                text = data[len(marker) :].decode(encoding)
            except UnicodeDecodeError:
                raise ToolFailure(f"{shown} is not valid {encoding} text") from None
            break
    else:
        if b"\x00" in data[:8192]:
            raise ToolFailure(f"{shown} is a binary file; it cannot be edited as text")
        try:
            text, encoding = data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            # Latin-1 maps every byte to one character and back, so nothing is lost.
            text, encoding = data.decode("latin-1"), "latin-1"
    return DecodedText(text=text, encoding=encoding, crlf="\r\n" in text, bom=bom)
