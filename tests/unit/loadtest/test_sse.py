"""The incremental SSE splitter and chunked decoder hand out events exactly when complete."""

import pytest

from loadtest.sse import ChunkedDecoder, SSEParser, SSEProtocolError


def test_event_is_returned_only_by_the_feed_that_completes_it():
    parser = SSEParser()
    stream = b'data: {"a": 1}\n\n'
    seen = [parser.feed(stream[i : i + 1]) for i in range(len(stream))]
    assert all(events == [] for events in seen[:-1])
    assert [e.data for e in seen[-1]] == ['{"a": 1}']


def test_two_events_in_one_read_are_split_apart():
    events = SSEParser().feed(b"data: one\n\ndata: two\n\n")
    assert [e.data for e in events] == ["one", "two"]


def test_crlf_boundaries_comments_and_multiline_data():
    events = SSEParser().feed(b": keep-alive\r\n\r\nevent: x\r\ndata: a\r\ndata: b\r\n\r\n")
    assert [(e.event, e.data) for e in events] == [("x", "a\nb")]


def test_crlf_split_across_reads_still_ends_the_event():
    parser = SSEParser()
    assert parser.feed(b"data: a\r\n\r") == []
    assert [e.data for e in parser.feed(b"\n")] == ["a"]


def test_unterminated_event_is_pending_not_lost():
    parser = SSEParser()
    parser.feed(b"data: half")
    assert parser.pending_bytes > 0


def test_event_without_boundary_beyond_limit_is_a_protocol_error():
    with pytest.raises(SSEProtocolError):
        SSEParser(max_event_bytes=100).feed(b"data: " + b"x" * 200)


def test_chunked_decoder_reassembles_payload_split_at_every_byte():
    body = b"data: hello\n\n"
    wire = f"{len(body):x}\r\n".encode() + body + b"\r\n" + b"5;ext=1\r\nabcde\r\n0\r\n\r\n"
    decoder = ChunkedDecoder()
    out = b"".join(decoder.feed(wire[i : i + 1]) for i in range(len(wire)))
    assert out == body + b"abcde"
    assert decoder.done


def test_chunked_decoder_rejects_a_bad_size_line():
    with pytest.raises(SSEProtocolError):
        ChunkedDecoder().feed(b"zz\r\n")
