"""OP-5.51: vLLM was asked to fetch a media URL whose host is a file's name: the client sent a local file as a URL.

Why a rule of its own: vLLM fetches every `image_url` (and video and audio URL) a request carries, and a client that
builds the URL from a local file's name sends `http://1.jpg`; vLLM then resolves `1.jpg` as a host name and the
request fails with the HTTP library's words (`ClientConnectorDNSError: Cannot connect to host 1.jpg:80`), which read
like a network fault of the server. In QwenLM/Qwen3-VL#1084 the maintainer answered that such a URL cannot be opened
and to send local images as base64, and the reporter's request worked with the image passed as a file. vLLM reads a
local path only under `--allowed-local-media-path` (its own message: "Set --allowed-local-media-path to enable reading
local videos"), as a `file://` URL.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_media_file_name(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.MEDIA_URL_FILE_NAME)
    if not events:
        return []
    event = events[0]
    name = event.message or "a file name"
    return [
        RULE.finding(
            Severity.HIGH,
            f"vLLM tried to fetch a media URL whose host is a file's name ({name}): the client sent a local file "
            "as a URL",
            summary=f"vLLM fetches the URL each image, video or audio part of a request carries. This one names "
            f"{name} where a host belongs (`http://{name}`), so the fetch looked {name} up as a host and failed: "
            "the file is on the client's machine, which the server cannot reach by its name.",
            evidence=[c.log_evidence(event, name="the media URL's host", value=name)],
            actions=[
                "Send the file's bytes in the request: `data:image/jpeg;base64,<base64 of the file>` as the "
                "image_url (video_url, input_audio likewise), as the model's maintainers advised in "
                "QwenLM/Qwen3-VL#1084.",
                "Or put the file where the server can read it and start vLLM with `--allowed-local-media-path "
                "<that directory>`, then send `file:///<that directory>/<file>`; or serve it over HTTP and send "
                "its full URL.",
            ],
            confidence=0.85,
        )
    ]


RULE = Rule(
    code="OP-5.51",
    title="a media URL whose host is a file's name",
    category=Category.RELIABILITY,
    check=_check_media_file_name,
    needs=("events",),
    page=RulePage(
        checks="A connection vLLM's HTTP client could not make to a host named like a media file (`Cannot connect "
        "to host 1.jpg:80`, `ConnectionPool(host='frame.png', …)`).",
        why="The client built the media URL from a local file's name; the error reads like the server's network.",
        example="`aiohttp.client_exceptions.ClientConnectorDNSError: Cannot connect to host 1.jpg:80 ssl:default "
        "[Name or service not known]` (QwenLM/Qwen3-VL#1084).",
        fix="A data: URL with the file's bytes, or file:// under --allowed-local-media-path, or a real HTTP URL.",
        limits="Only hosts ending in a media file's extension are read so; a mistyped host name is not.",
        references=["https://github.com/QwenLM/Qwen3-VL/issues/1084"],
    ),
)

RULES: list[Rule] = [RULE]
