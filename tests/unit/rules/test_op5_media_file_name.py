"""OP-5.51: a media URL whose host is a file's name (a client sending a local file as a URL)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op5_media_file_name
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_host_named_like_an_image_is_a_local_file_sent_as_a_url():
    # QwenLM/Qwen3-VL#1084, verbatim
    line = (
        "aiohttp.client_exceptions.ClientConnectorDNSError: Cannot connect to host 1.jpg:80 ssl:default [Name or "
        "service not known]"
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-5.51" and "(1.jpg)" in top.title
    assert "base64" in top.actions[0] and "--allowed-local-media-path" in top.actions[1]


def test_a_real_host_is_not_read_as_a_file_name():
    line = "aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host upload.wikimedia.org:443 ssl:default"
    assert op5_media_file_name.RULE.evaluate(_facts([line])) == []
