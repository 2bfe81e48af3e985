"""vLLM's own messages (vllm_messages.json, docs/vllm-messages.md) matched against text a user pasted.

Why a catalog and not rules per incident: vLLM checks a launch and a request in hundreds of places and
says precisely what is wrong; matching its words tells triage the cause, the file and line it came from,
the releases that print it and the flags or environment variables it names, for messages nobody here
has seen yet. 14,000 regular expressions cannot all run over every line, so each entry is indexed by
the rarest word of its first sentence's literal text and only the entries whose word a line holds are
tried (compiled on first use).

A pasted message is often cut: an issue title keeps the first sentence, a log shipper wraps the line.
When the whole pattern does not match, its leading sentences are tried, longest first, as long as they
keep at least `MIN_PARTIAL_LITERAL` characters of vLLM's own wording; failing those, the pattern cut
where the line ends, even mid-word, or where it begins (from a word of vLLM's), or at both ends (a run from
inside the message, `MIN_INSIDE_LITERAL` characters at least and something only a message holds).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from typing import Any

from rules import vllm_defaults
from rules.events import CatalogRef

# A partial match must hold this much of the message's literal text: "Error in" would match anything.
MIN_PARTIAL_LITERAL = 24
# A message with less literal text than that ("unexpected error", "model is required") is common English: inside
# another line (Ray's "… crashed unexpectedly due to SIGSEGV or other unexpected errors.") it is not vLLM's. Such a
# message matches only where a message starts (the line's start, after a class's or logger's `: `, `] `, a dash or
# a quote, or a Chinese sentence's full-width colon: `一直报错：Unknown part type: audio`, dasheng-lm#31) and, with no
# field to end it, only where the line then ends, or the inline code it was quoted in does (a sentence quoting
# `RuntimeError: UVA is not available`, syv-ai/qwen38-27b-rtx3090 PR #77). Not after a backtick: a phrase a sentence
# puts in code (`` `Insufficient memory` while allocating ``) is not vLLM's message.
_SHORT_START = r"""(?:^|(?<=[:\]'"\-：])\s*)"""
_SHORT_END = r"""(?:[\s.!'"})\],]*$|[.!'"]*`)"""
NEAREST_SHARED_WORDS = 2  # words an unknown error must share with a message for it to count as near
CUT_CANDIDATES = 5  # entries tried for a paste cut mid-sentence, those sharing most of its words
RAREST_WORDS_OF_CUT = 3  # a cut paste's rarest words whose entries join those candidates
# A quoted value at every quote a message holds (a lookahead, so `'a' 'b'` yields both and overlaps are kept).
_QUOTED = re.compile(r"""(?=(['"`])([^'"`\s]+)\1)""")
# A value an error's own words quote (its quotes need not pair: a person's paste, not vLLM's source).
_QUOTED_IN_ERROR = re.compile(r"""['"`]([^'"`\s]{6,80})['"`]""")
MODEL_FILES = "vllm/model_executor/models/"  # one model's code each
MAX_NAMING = 3  # messages that may quote one value before it counts as too common to tell anything
# A value no English word could be: 6 to 80 characters of a name, with a symbol, digit or underscore in it.
_DISTINCT_VALUE = re.compile(r"^(?=.{6,80}$)(?=.*[&_.:/\d-])[\w&.:/-]+$")
# Words too common in vLLM's messages to index an entry by (an entry is indexed by its rarest long word).
_MIN_ANCHOR_CHARS = 4
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,}")
_GROUP = re.compile(r"\(\?P<\w+>\.\+\??\)")
_SENTENCE_END = r"\. "
_SENTENCE_ENDS = re.compile(r"\\\. |! |\\\? ")  # in an escaped pattern: `\. `, `! `, `\? `


@dataclass(frozen=True, slots=True)
class CatalogMatch:
    """One catalog entry found in a line: the entry, what its fields captured, and how much of it matched."""

    entry: dict[str, Any]
    captured: dict[str, str]
    span: tuple[int, int]
    group_spans: tuple[tuple[int, int], ...]
    literal_chars: int
    partial: bool

    def ref(self, release: str | None = None, logged_in: str | None = None) -> CatalogRef:
        """The match as an event carries it (rules read this, never the JSON). With the server's `release`
        known (its banner, its engine line), the file and line are where that release raises the message (a V0
        server's `vllm/worker/worker.py`, not V1's `vllm/v1/core/kv_cache_utils.py`), with that place's span.
        With the file the log line's header names (`[hermes_tool_parser.py:117]`), a message many files log in
        the same words is placed in that file."""
        entry = self.entry
        place = _place_for(entry, release, logged_in)
        return CatalogRef(
            template=entry["message"],
            file=place["file"],
            line=place["line"],
            first=place["first"],
            last=place["last"],
            first_release=place.get("first_release"),
            last_release=place.get("last_release"),
            wording_first=entry["wording_first"],
            wording_last=entry["wording_last"],
            exception=entry.get("exception"),
            level=entry.get("level"),
            kind=entry.get("kind"),
            also_in=_also_in(entry, place, release) if entry.get("kind") == "check" else [],
            logged_at=entry.get("logged_at"),
            phase=entry["phase"],
            flags=list(entry["flags"]),
            env=list(entry["env"]),
            captured=dict(self.captured),
            partial=self.partial,
        )


class MessageCatalog:
    """The entries, indexed by anchor word; `match` finds vLLM's messages in one line of text."""

    def __init__(self, document: dict[str, Any]) -> None:
        entries = _distinct(document["messages"])
        # A wordless check is known by its whole statement (`check`), never looked for inside another line's words:
        # `assert x is not None` is anyone's code.
        self._checks: dict[str, dict[str, Any]] = {
            check_statement(entry["message"]): entry for entry in entries if entry.get("kind") == "check"
        }
        self.entries: list[dict[str, Any]] = [entry for entry in entries if entry.get("kind") != "check"]
        self.header: dict[str, Any] = document["header"]
        # (class, field) -> the minors whose EngineArgs / AsyncEngineArgs declares the field
        self._engine_args: dict[tuple[str, str], list[str]] = {
            (row["class"], row["field"]): row["versions"] for row in document.get("engine_args", [])
        }
        # (class, field) -> the first and last release that declares it: a patch where only some of a minor's did
        self._engine_arg_span: dict[tuple[str, str], tuple[str, str]] = {
            (row["class"], row["field"]): _exact_span(row) for row in document.get("engine_args", [])
        }
        # package -> (extra, (the first and last release whose extra installs it): a patch where only some did)
        self._extras: dict[str, list[tuple[str, tuple[str, str]]]] = {}
        for row in document.get("extras", []):
            self._extras.setdefault(row["package"], []).append((row["extra"], _exact_span(row)))
        # architecture -> the (first, last) releases each registry table that lists it spans
        self._architectures: dict[str, list[tuple[str, str]]] = {}
        for row in document.get("architectures", []):
            self._architectures.setdefault(row["architecture"], []).append(_exact_span(row))
        self._by_word: dict[str, list[int]] = {}
        frequency: dict[str, int] = {}
        # Anchored in the first sentence: a cut paste keeps that one (`_leading_sentences`).
        words_of = [_anchor_words(entry["pattern"].split(_SENTENCE_END)[0]) for entry in self.entries]
        words_of = [w or _anchor_words(entry["pattern"]) for w, entry in zip(words_of, self.entries, strict=True)]
        # Python's own words, which vLLM's lazy `__getattr__`s repeat: not found in a line, they would claim any
        # AttributeError as vLLM's (`'ServingEmbedding' object has no attribute 'create_embedding'`, kserve#5399)
        self._python_shaped = frozenset(i for i, entry in enumerate(self.entries) if _python_shaped(entry["pattern"]))
        words_of = [[] if i in self._python_shaped else w for i, w in enumerate(words_of)]
        for words in words_of:
            for word in words:
                frequency[word] = frequency.get(word, 0) + 1
        for index, words in enumerate(words_of):
            if words:  # the rarest word (ties: the longest) narrows the candidates most
                anchor = min(words, key=lambda w: (frequency[w], -len(w), w))
                self._by_word.setdefault(anchor, []).append(index)
        self.known_flags: frozenset[str] = frozenset(flag for entry in self.entries for flag in entry["flags"])
        self._compiled: dict[
            int, tuple[re.Pattern[str], re.Pattern[str] | None, list[tuple[re.Pattern[str], int]]]
        ] = {}

    def match(self, text: str, logged_in: str | None = None) -> list[CatalogMatch]:
        """vLLM's messages in `text`, the most specific first; a message quoted inside another's field (a
        worker's error inside "Worker failed with error '…'") ranks before the wrapper; among equals, the one said
        in `logged_in`, the file the line's logger names."""
        found = []
        candidates = sorted({i for word in set(_WORD.findall(text)) for i in self._by_word.get(word.lower(), ())})
        for index in candidates:
            found_here = self._match_entry(index, text)
            if found_here is not None:
                found.append(found_here)
        said = text.split(": ", 1)[-1]  # after an exception's class, which the reader spells as Python does
        if not found and said == said.lower() and any(ch.isalpha() for ch in said):  # a line retyped in lower case
            found = [m for i in candidates if (m := self._match_entry(i, text, folded=True)) is not None]
        if not found:  # a paste cut mid-sentence: the few entries sharing most of its words, cut where it ends
            words = {w.lower() for w in _WORD.findall(text)}
            pool = (set(candidates) | self._holding_rarest(words)) - self._python_shaped  # a cut may take an anchor
            closest = sorted(pool, key=lambda i: (-len(words & self._words[i]), i))
            for index in closest[:CUT_CANDIDATES]:
                pattern = _loose_backticks(self.entries[index]["pattern"])
                cut = _cut_match(pattern, text) or _cut_at_start(pattern, text) or _cut_inside(pattern, text)
                if cut is not None:
                    found.append(_as_match(self.entries[index], cut, partial=True))
        return _most_specific_first(found, logged_in)

    def check(self, statement: str) -> CatalogMatch | None:
        """The wordless assert of vLLM's whose statement this is (`assert token_lora_mapping.size(0) == M`, as a
        traceback prints it above a bare AssertionError), else None."""
        entry = self._checks.get(check_statement(statement))
        if entry is None:
            return None
        chars = len(entry["message"])
        return CatalogMatch(entry, {}, (0, chars), (), chars, partial=False)

    def nearest(self, text: str, count: int = 3) -> list[CatalogRef]:
        """The entries closest to `text` by their literal words (cosine over words weighted by rarity), for
        an error nothing matched: where in vLLM similar things are said. Only entries sharing at least
        `NEAREST_SHARED_WORDS` of its words: one shared word, however rare (`operand`, `actor`), is a
        coincidence that sends the reader to unrelated code, so an error outside vLLM's words gets none."""
        words = {w.lower() for w in _WORD.findall(text)} & set(self._rarity)
        if not words:
            return []
        scores: dict[int, float] = {}
        shared: dict[int, int] = {}
        for word in sorted(words):  # in one order: float sums in a set's order differ by run and flip ties
            for index in self._entries_with[word]:
                scores[index] = scores.get(index, 0.0) + self._rarity[word] ** 2
                shared[index] = shared.get(index, 0) + 1
        norm = sum(self._rarity[w] ** 2 for w in sorted(words)) ** 0.5
        near = [(index, score) for index, score in scores.items() if shared[index] >= NEAREST_SHARED_WORDS]
        ranked = sorted(near, key=lambda pair: (-pair[1] / (norm * self._norms[pair[0]]), pair[0]))
        return [CatalogMatch(self.entries[i], {}, (0, 0), (), 0, True).ref() for i, _ in ranked[:count]]

    def naming(self, value: str) -> CatalogRef | None:
        """The one message that quotes `value` (`'embed&token_classify'`, a KeyError's key): what vLLM says of that
        value where it checks it, often a later release's explanation of an older one's bare error. Only a
        value that no English word could be (a symbol, a digit or an underscore in it) held by at most
        `MAX_NAMING` messages: a common value quoted everywhere says nothing."""
        if not _DISTINCT_VALUE.match(value):
            return None
        holders = self._quoting.get(value, [])
        if not holders or len(holders) > MAX_NAMING:
            return None
        # one model's file speaks of that model's config (unlimited_ocr2's `eos_token_id`), not of the value an error
        # elsewhere names
        general = [self.entries[i] for i in holders if not self.entries[i]["file"].startswith(MODEL_FILES)]
        if not general:
            return None
        newest = max(general, key=lambda entry: _minor(entry["last"]))
        return CatalogMatch(newest, {}, (0, 0), (), 0, True).ref()

    def naming_in(self, said: str) -> CatalogRef | None:
        """The message that names a value an error's words quote (a KeyError's key): `naming` of each, in order."""
        return next((ref for value in _QUOTED_IN_ERROR.findall(said) if (ref := self.naming(value))), None)

    def releases_with(self, *modules: str, patch: bool = False) -> tuple[str, str] | None:
        """The first and last minor release whose source says something in one of `modules` (a file, or a
        folder ending in `/`): when a part of vLLM existed, read from where vLLM raised or logged in it. `patch`: the
        first as the patch that brought it where the catalog read one (`0.11.1`: 0.11.0 lacked the file)."""
        places = [
            place
            for entry in self.entries
            for place in entry.get("places") or [entry]  # a message that moved: each file with its own span
            if any(place["file"] == m or (m.endswith("/") and place["file"].startswith(m)) for m in modules)
        ]
        if not places:
            return None
        earliest = min(places, key=lambda place: (_minor(place["first"]), _minor(place.get("first_release") or "")))
        first = (patch and earliest.get("first_release")) or earliest["first"]
        return first, max((place["last"] for place in places), key=_minor)

    @property
    def minors_read(self) -> list[str]:
        """The minor releases the catalog was extracted from, oldest first."""
        return [version["minor"] for version in self.header.get("versions", [])]

    def release_read(self, minor: str) -> str:
        """The newest patch the catalog read of `minor` (`0.4` -> `0.4.3`; it reads every patch, the minor's span
        is up to this one), `minor` itself for one it did not read: a first minor names that release, since its
        earlier patches may lack what it has."""
        for version in self.header.get("versions", []):
            if version["minor"] == minor:
                return str(version["release"])
        return minor

    @cached_property
    def engine_args_minors(self) -> list[str]:
        """The minors whose engine arguments the catalog holds (none for a catalog built before it read them)."""
        held = {minor for versions in self._engine_args.values() for minor in versions}
        return [minor for minor in self.minors_read if minor in held]

    def engine_argument_span(self, cls: str, name: str) -> tuple[str, str] | None:
        """The first and last release in which a caller could pass `name` to `cls`, a patch where only some patches
        of the minor took it (`use_beam_search`: 0.4 to 0.6.2); None when no release read declares it."""
        spans = [self._engine_arg_span[(c, name)] for c in _declaring(cls) if (c, name) in self._engine_arg_span]
        if not spans:
            return None
        return min((first for first, _ in spans), key=_minor), max((last for _, last in spans), key=_release_end)

    def extra_installing(self, package: str) -> tuple[str, str, str] | None:
        """(extra, first, last release) of vLLM's extra that installs `package` (`decord`: video, 0.6.4.post1 to
        0.8.2), the one of the newest releases where several did; None when no extra of any release read installs
        it."""
        rows = self._extras.get(package.lower().replace("_", "-"), [])
        if not rows:
            return None
        extra, (first, last) = max(rows, key=lambda row: _release_end(row[1][1]))
        return extra, first, last

    def architecture_releases(self, architecture: str) -> tuple[str, str] | None:
        """(first, last) release whose model registry lists `architecture` (Qwen3_5MoeForConditionalGeneration:
        0.17.0 to the newest read), the first as a patch where the catalog read it in one; None when no release
        read lists it (an architecture only a plugin or the Transformers backend runs)."""
        spans = self._architectures.get(architecture)
        if not spans:
            return None
        first = min((span[0] for span in spans), key=_minor)
        last = max((span[1] for span in spans), key=_release_end)
        return self._first_patch_read(first) if len(_minor(first)) == 2 else first, last

    def _first_patch_read(self, minor: str) -> str:
        """The oldest patch the catalog read of `minor` (`0.17` -> `0.17.0`): where a row's span starts with its
        whole minor, that patch already had it."""
        version = next((v for v in self.header.get("versions", []) if v["minor"] == minor), None)
        return str(version["releases"][0]) if version and version.get("releases") else minor

    def runs_in_newest(self, architecture: str) -> bool:
        """Whether the newest release read builds `architecture`: its registry lists it, or lists the model it is
        converted from. vLLM resolves a name it does not list by swapping its suffix for another of
        ARCHITECTURE_SUFFIXES whose model it lists (`Qwen2ForSequenceClassification` from `Qwen2ForCausalLM`, an
        adapter over it: vllm/model_executor/models/registry.py's _normalize_arch, 0.34), so such a name leaving the
        registry's tables was no removal."""
        newest = self.newest_minor()
        suffix = next((s for s in ARCHITECTURE_SUFFIXES if architecture.endswith(s)), None)
        names = [architecture]
        if suffix is not None:
            names += [architecture.removesuffix(suffix) + other for other in ARCHITECTURE_SUFFIXES if other != suffix]
        return any(
            _minor(span[1])[:2] == _minor(newest)[:2] for name in names for span in self._architectures.get(name, [])
        )

    def listed_within(self, architecture: str) -> str | None:
        """The longest architecture some release lists that `architecture` ends with, when it is itself listed by
        none (`FSDPQwen2ForCausalLM` -> `Qwen2ForCausalLM`: a trainer saved its wrapper class's name in the
        config, SkyRL#97); None otherwise."""
        if architecture in self._architectures:
            return None
        within = [name for name in self._architectures if architecture.endswith(name) and name != architecture]
        return max(within, key=len, default=None)

    def knows_architectures(self) -> bool:
        """Whether the catalog read the releases' model registries at all (a catalog built before it did has none)."""
        return bool(self._architectures)

    def newest_minor(self) -> str:
        """The newest minor release the catalog read (`0.34`)."""
        return str(max((v["minor"] for v in self.header.get("versions", [])), key=_minor, default=""))

    def _holding_rarest(self, words: set[str]) -> set[int]:
        """The entries holding the rarest of `words` that the catalog knows: a paste cut inside an entry's rarest
        word (its anchor: `does not defi` for `define`) still shares its next rarest ones."""
        known = sorted((len(self._entries_with[w]), w) for w in words if w in self._entries_with)
        return {index for _, word in known[:RAREST_WORDS_OF_CUT] for index in self._entries_with[word]}

    @cached_property
    def _words(self) -> list[frozenset[str]]:
        """Each entry's literal words, read from its pattern once (the word index, the norms and a cut paste's
        candidates all ask them)."""
        return [_literal_words(entry["pattern"]) for entry in self.entries]

    @cached_property
    def _entries_with(self) -> dict[str, list[int]]:
        """Every literal word → the entries that hold it (built on the first unplaced error)."""
        index: dict[str, list[int]] = {}
        for number, words in enumerate(self._words):
            for word in words:
                index.setdefault(word, []).append(number)
        return index

    @cached_property
    def _quoting(self) -> dict[str, list[int]]:
        """Every value a message quotes (`'…'`, `"…"` or `` `…` ``, no space in it) → the entries quoting it, in
        order (built on the first lookup)."""
        index: dict[str, dict[int, None]] = {}
        for number, entry in enumerate(self.entries):
            for _, value in _QUOTED.findall(entry["message"]):
                index.setdefault(value, {})[number] = None
        return {value: list(numbers) for value, numbers in index.items()}

    @cached_property
    def _rarity(self) -> dict[str, float]:
        total = len(self.entries)
        return {word: math.log(total / len(holders)) for word, holders in self._entries_with.items()}

    @cached_property
    def _norms(self) -> list[float]:
        rarity = self._rarity
        return [max(1e-9, sum(rarity[w] ** 2 for w in sorted(words)) ** 0.5) for words in self._words]

    def _match_entry(self, index: int, text: str, folded: bool = False) -> CatalogMatch | None:
        """The entry in `text`: its whole pattern, the same without its final full stop, or a leading sentence.
        `folded`: regardless of case, for a line a person typed all in lower case (`valueerror: bfloat16 is only
        supported on gpus …`, OpenBuddy/OpenBuddy#45), compiled per call since such lines are rare."""
        whole, unended, partials = self._patterns(index)
        if folded:
            whole, unended = _folded(whole), _folded(unended) if unended is not None else None
            partials = [(_folded(pattern), literal) for pattern, literal in partials]
        match, partial = whole.search(text), False
        if match is None and unended is not None:
            match = unended.search(text)
        if match is None:
            for pattern, literal in partials:
                if literal >= MIN_PARTIAL_LITERAL:
                    match, partial = pattern.search(text), True
                    if match is not None:
                        break
        if match is None:
            return None
        closing = _closing_backtick(match, text)
        if closing is not None:  # quoted as inline code: its value ends where the code does, unless that was a
            # backtick of vLLM's own words (`--flag`), when the match without it stands
            inside = self._match_entry(index, text[:closing], folded)
            if inside is not None:
                return inside
        return _as_match(self.entries[index], match, partial, fields=_one_word_lead(match, text))

    def _patterns(
        self, index: int
    ) -> tuple[re.Pattern[str], re.Pattern[str] | None, list[tuple[re.Pattern[str], int]]]:
        """The whole pattern; the same without its final full stop, where the line ends (a pasted line often
        drops it, and a field just before it then ends at the line's end); its leading sentences."""
        if index not in self._compiled:
            pattern = _loose_commas(_loose_backticks(self.entries[index]["pattern"]))
            if len(_GROUP.sub("", pattern).replace("\\", "")) < MIN_PARTIAL_LITERAL:
                pattern = _SHORT_START + pattern + ("" if _GROUP.search(pattern) else _SHORT_END)
            unended = re.compile(pattern.removesuffix(r"\.") + r"\s*$") if pattern.endswith(r"\.") else None
            self._compiled[index] = (re.compile(pattern), unended, _leading_sentences(pattern))
        return self._compiled[index]


# What may stand between the backtick that opens inline code and vLLM's words in it: the exception's class
_OPENED_BEFORE = re.compile(r"`\s*(?:[A-Za-z_][\w.]*:\s*)?$")


def _closing_backtick(match: re.Match[str], text: str) -> int | None:
    """Where the inline code a message was quoted in closes, when it closes inside the match (`` `Unknown image model
    type: llama`) `` or `` `ValueError: Unknown image model type: llama` when … ``: a field's greedy group would take
    the backtick and what follows it)."""
    start = match.start()
    while start < len(text) and text[start].isspace():
        start += 1
    if _OPENED_BEFORE.search(text, 0, start) is None:
        return None
    closing = text.find("`", start, match.end())
    return closing if closing > start else None


# The literal words of Python's own AttributeError messages (`'X' object has no attribute 'y'`, `module 'x' has no
# attribute 'y'`), which vLLM's module and class `__getattr__`s raise again word for word
_PYTHON_WORDINGS = frozenset({"object has no attribute", "module has no attribute", "has no attribute"})


def _python_shaped(pattern: str) -> bool:
    """Whether an entry's literal text is one of Python's own messages, its fields and quotes aside."""
    literal = _GROUP.sub(" ", pattern).replace("\\", "").replace("'", " ").replace('"', " ")
    return " ".join(literal.split()).lower() in _PYTHON_WORDINGS


def _folded(pattern: re.Pattern[str]) -> re.Pattern[str]:
    return re.compile(pattern.pattern, re.IGNORECASE)


def _loose_backticks(pattern: str) -> str:
    """The pattern with each backtick optional: vLLM quotes flags and names in backticks, and a line copied from a
    rendered GitHub comment has lost them (an unpaired one too: `in --limit-mm-per-prompt`, but passed …`)."""
    return pattern.replace("`", "`?")


# A comment after a statement (`assert n > 0  # a comment`), which a traceback prints with the line and the catalog's
# statement does not hold; a `#` followed by a quote may be inside a string, and is left.
_TRAILING_COMMENT = re.compile(r"\s+#[^'\"]*$")


def check_statement(text: str) -> str:
    """A wordless check's statement as the catalog keys it: without a trailing comment, its runs of white space
    as one space (a paste may reflow them)."""
    return " ".join(_TRAILING_COMMENT.sub("", text).split())


def _also_in(entry: dict[str, Any], place: dict[str, Any], release: str | None) -> list[str]:
    """The other files that hold a wordless check's statement: with the server's release known, those of that
    release only (0.12's LoRA kernels, not 0.8's files of other names)."""
    places = entry.get("places", ())
    places = _covering(places, release) if release else places
    return sorted({p["file"] for p in places} - {place["file"]})


def _covering(places: Iterable[dict[str, Any]], release: str | None) -> list[dict[str, Any]]:
    """The places whose span of minors holds the release's (none without a release)."""
    minor = _minor(release)[:2] if release else ()
    return [p for p in places if minor and _minor(p["first"]) <= minor <= _minor(p["last"])]


def _file_name(path: str | None) -> str:
    """A file's own name, from a catalog path (`vllm/utils/argparse_utils.py`) or a log header's `file.py:257`."""
    return path.split(":", 1)[0].rsplit("/", 1)[-1] if path else ""


# A comma vLLM's words glue to the next word (`MTP layer,which may result …`, vllm/config/speculative.py): a person who
# retypes or a renderer that reflows the line puts the space back (eugr/spark-vllm-docker#343's paste)
_GLUED_COMMA = re.compile(r",(?=\w)")


def _loose_commas(pattern: str) -> str:
    return _GLUED_COMMA.sub(r",\\ ?", pattern)


@cache
def message_catalog() -> MessageCatalog:
    """The committed catalog, read once per process (about 10 MB of JSON)."""
    text = resources.files("advisor.catalog").joinpath("vllm_messages.json").read_text(encoding="utf-8")
    return MessageCatalog(json.loads(text))


def _distinct(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per wording: the same message raised in several files (or moved between releases) keeps
    the entry of the newest release, with the span of releases of all of them, and every place it is raised
    (`places`: file, line, first, last, and the first or last patch where only some patches of a minor print it
    there), so a server whose release is known is pointed at its own file. `wording_first` and `wording_last`
    are the exact span of the words anywhere (`0.5.1`, a patch, where the catalog read one)."""
    newest: dict[str, dict[str, Any]] = {}
    places: dict[str, list[dict[str, Any]]] = {}
    logged: dict[str, str] = {}  # words some release logs: the level it logs them at
    for entry in entries:
        key = entry["pattern"]
        place = {name: entry[name] for name in PLACE_KEYS if name in entry}
        places.setdefault(key, []).append(place)
        if entry.get("kind") == "log":
            logged.setdefault(key, entry.get("level") or "warning")
        kept = newest.get(key)
        if kept is None:
            newest[key] = dict(entry)
            continue
        if _minor(entry["last"]) > _minor(kept["last"]):
            entry = {**entry, "first": min(kept["first"], entry["first"], key=_minor)}
            newest[key] = dict(entry)
        else:
            kept["first"] = min(kept["first"], entry["first"], key=_minor)
    for key, entry in newest.items():
        entry["places"] = places[key]
        if key in logged:
            entry["logged_at"] = logged[key]
        spans = [_exact_span(place) for place in places[key]]
        entry["wording_first"] = min((first for first, _ in spans), key=_minor)
        entry["wording_last"] = max((last for _, last in spans), key=_release_end)
    return list(newest.values())


# The architecture suffixes vLLM resolves into one another (vllm/config/model.py's _SUFFIX_TO_DEFAULTS, 0.34: a
# `…ForSequenceClassification` is built from the registry's `…ForCausalLM`), longest match first where one ends another
ARCHITECTURE_SUFFIXES = (
    "ForConditionalGeneration",
    "ForSequenceClassification",
    "ForTokenClassification",
    "ForAudioClassification",
    "ForImageClassification",
    "ForVideoClassification",
    "ClassificationModel",
    "ForRewardModeling",
    "ForTextEncoding",
    "EmbeddingModel",
    "LMHeadModel",
    "RewardModel",
    "ForCausalLM",
    "ChatModel",
)

PLACE_KEYS = ("file", "line", "first", "last", "first_release", "last_release")


def _exact_span(row: dict[str, Any]) -> tuple[str, str]:
    """The first and last release of a catalog row (an entry, a place, an engine argument, an extra's package): its
    first (last) patch where the catalog names one, else its minor."""
    return str(row.get("first_release") or row["first"]), str(row.get("last_release") or row["last"])


def _declaring(cls: str) -> tuple[str, ...]:
    """The classes whose fields a caller passes to `cls`: AsyncEngineArgs takes its own and EngineArgs'."""
    return ("AsyncEngineArgs", "EngineArgs") if cls == "AsyncEngineArgs" else (cls,)


def _release_end(version: str) -> tuple[int, ...]:
    """Sorts a span's end: a minor (`0.5`, every patch of it) after any of its patches (`0.5.2`)."""
    numbers = _minor(version)
    return numbers if len(numbers) > 2 else (*numbers, 1_000_000)


def _place_for(entry: dict[str, Any], release: str | None, logged_in: str | None = None) -> dict[str, Any]:
    """Where `release` raises the entry's message: among the places in the file the line's header names (when
    one is), the place whose span holds its minor, the GPU worker's before a platform's (`vllm/worker/worker.py`
    before `hpu_worker.py`) and the default engine's before the other (V0's before 0.8, V1's from it), else the
    newest of those places (the entry's own when no header narrows them)."""
    places = entry.get("places", ())
    in_named = _said_in(places, logged_in)
    if in_named:
        places = in_named
        entry = max(in_named, key=lambda place: _minor(place["last"]))
    covering = _covering(places, release)
    if not covering:
        return entry
    v1_default = _minor(release)[:2] >= vllm_defaults.V1_DEFAULT_FROM[:2]
    return min(
        covering,
        key=lambda place: (_platform_file(place["file"]), place["file"].startswith("vllm/v1/") != v1_default),
    )


def _platform_file(file: str) -> bool:
    """A platform's own copy of a message (`hpu_worker.py`, `xpu_model_runner.py`, `vllm/platforms/…`)."""
    name = file.rsplit("/", 1)[-1]
    return file.startswith(("vllm/platforms/", "platforms/")) or name.split("_", 1)[0] in _PLATFORM_PREFIXES


_PLATFORM_PREFIXES = frozenset({"cpu", "hpu", "xpu", "tpu", "neuron", "openvino", "rocm", "habana"})


def _minor(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def _anchor_words(pattern: str) -> frozenset[str]:
    """The literal words an entry can be found by: whole words in any line that holds the message, so never one
    glued to a field (`BFCL_v3_{category}.json`: a line holds `BFCL_v3_x7`, not `BFCL_v3_`); all literal words
    when every one touches a field."""
    literal = _GROUP.sub("\x00", pattern).replace("\\", "")
    whole = [
        m.group().lower()
        for m in _WORD.finditer(literal)
        if len(m.group()) >= _MIN_ANCHOR_CHARS
        and literal[m.start() - 1 : m.start()] != "\x00"
        and literal[m.end() : m.end() + 1] not in ("\x00", "_")
    ]
    return frozenset(whole) or _literal_words(pattern)


def _literal_words(pattern: str) -> frozenset[str]:
    literal = _GROUP.sub(" ", pattern).replace("\\", "")
    return frozenset(w.lower() for w in _WORD.findall(literal) if len(w) >= _MIN_ANCHOR_CHARS)


def _leading_sentences(pattern: str) -> list[tuple[re.Pattern[str], int]]:
    """The pattern's leading sentences (longest first) with their literal length, for a cut message. A sentence ends
    at a full stop, or at an exclamation or question mark (`… but instead found {n} prompt updates! Either …`, whose
    paste verl-project/verl#841 cut in its second sentence)."""
    out = []
    for end in reversed(list(_SENTENCE_ENDS.finditer(pattern))):
        prefix = pattern[: end.start()]
        try:
            compiled = re.compile(prefix)
        except re.error:  # a sentence end inside a group or an alternation: not a place to cut
            continue
        out.append((compiled, len(_GROUP.sub("", prefix).replace("\\", ""))))
    return out


_LEADING_FIELD = re.compile(r"^(\(\?P<\w+>)\.\+\??\)")
_SENTENCE_FIELD = re.compile(r" [A-Z][a-z]")  # the field is followed by a new sentence: it is one itself
# What words before a quoted message leave in a field that spans them: a sentence's or a clause's end, a colon, a
# quote or a bracket (`I got a warning: `awq …`, pydantic's `Value error, torch.bfloat16 …`, a logger's
# `warning:[arg_utils.py:1746] --kv-transfer-config …`). A field without them is vLLM's own words (`Compute Capability
# < 8.0 is not supported by the V1 Engine.`, vllm#23531's log).
_LEAD_IN = re.compile(r"[.!?;,。]\s|[:：`'\"\[\]]")
_ONE_WORD = r"""[`'"]?(?:[^\s`'"]+)[`'"]?)"""


def _one_word_lead(match: re.Match[str], text: str) -> re.Match[str]:
    """A message that starts with a field, found inside a person's sentence: the field is the word before vLLM's
    words, not the sentence (`I got a warning: `awq quantization is not fully optimized yet`). Only the fields'
    values change: where the match lies (which message quotes which) is the whole match's."""
    lead = _LEADING_FIELD.match(match.re.pattern)
    field = (match.group(1) or "") if lead is not None else ""
    if not any(c.isspace() for c in field) or not _LEAD_IN.search(field):
        return match
    if _SENTENCE_FIELD.match(match.re.pattern[lead.end() :]):  # `{message} Falling back to …`: a sentence
        return match
    tight = _LEADING_FIELD.sub(lambda m: m.group(1) + _ONE_WORD, match.re.pattern, count=1)
    return re.search(tight, text) or match


def _as_match(
    entry: dict[str, Any], match: re.Match[str], partial: bool, fields: re.Match[str] | None = None
) -> CatalogMatch:
    names = list(match.groupdict())
    spans = tuple(match.span(name) for name in names if match.group(name) is not None)
    values = (fields or match).groupdict().items()
    captured = {name: value.strip().strip("`'\"") for name, value in values if value is not None}
    literal = (match.end() - match.start()) - sum(end - start for start, end in spans)
    return CatalogMatch(entry, captured, match.span(), spans, literal, partial)


# One unit of a pattern: an escaped character, a field's group, or a plain character.
_ATOM = re.compile(r"\\.|\(\?P<\w+>\.\+\??\)|.", re.DOTALL)
# Where a tool that cut vLLM's message went on with a sentence of its own: a full stop or an ellipsis, a
# space, a capital letter.
# How a person marks what they left out of a line they quote.
_ELLIPSIS = r"\.\.\.|…"
_APPENDED_SENTENCE = re.compile(rf"(?:\.|{_ELLIPSIS})\s+(?=[A-Z])")
# The ellipsis a person ends a line with where they cut it (`The decoder prompt (length 4926) is longer than ...`,
# QwenLM/Qwen3-Omni#122): the cut is before it.
_TRAILING_ELLIPSIS = re.compile(rf"\s*(?:{_ELLIPSIS})\s*$")


def _cut_match(pattern: str, text: str) -> re.Match[str] | None:
    """The pattern cut inside its literal text where the pasted line ends (`… are not supported for no`,
    an issue title at its width), where a sentence the tool that cut it added begins (a chat UI's
    `…--enable-auto-tool-ch. Check the logs for more details`), or before the ellipsis a person cut it with, as
    long as `MIN_PARTIAL_LITERAL` characters of vLLM's words are kept."""
    ellipsis = _TRAILING_ELLIPSIS.search(text)
    ends = [len(text.rstrip()), *(m.start() for m in _APPENDED_SENTENCE.finditer(text))]
    for end in ends + ([ellipsis.start()] if ellipsis else []):
        found = _cut_at_end(pattern, text[:end].rstrip())
        if found is not None:
            return found
    return None


@cache
def _atoms(pattern: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """A pattern's atoms, and before each position how many literal characters precede it (the last entry: all of
    them). The catalog's few closest entries are cut for every line nothing matched, so this is worked out once per
    entry, for a cut at either end."""
    atoms = tuple(_ATOM.findall(pattern))
    literal_before = [0]
    for atom in atoms:
        literal_before.append(literal_before[-1] + (0 if atom.startswith("(?P<") else 1))
    return atoms, tuple(literal_before)


def _cut_at_end(pattern: str, tail: str) -> re.Match[str] | None:
    atoms, literal_before = _atoms(pattern)
    for cut in range(len(atoms) - 1, 0, -1):
        if literal_before[cut] < MIN_PARTIAL_LITERAL:
            return None
        last = atoms[cut - 1]
        if last.startswith("(?P<") or last in ("(", "[", "|") or last[-1] != tail[-1:]:
            continue  # cut after vLLM's own words only, where the line's last character is, never in a group
        try:
            found = re.search("".join(atoms[:cut]) + r"$", tail)
        except re.error:
            continue
        if found is not None:
            return found
    return None


def _word_starts(atoms: tuple[str, ...], word: str) -> Iterator[int]:
    """Where in the pattern's atoms a word of vLLM's literal text begins that reads `word` (any case): the places a
    line cut at its start can begin, never inside a group or a word."""
    for start in range(1, len(atoms)):
        first, before = atoms[start], atoms[start - 1]
        if first.isalpha() and before in (" ", "\\ ") and "".join(atoms[start : start + len(word)]).lower() == word:
            yield start


def _either_case(first: str) -> str:
    """The first letter of a run as either case: a title or a sentence may capitalise what vLLM did not."""
    return f"[{first.lower()}{first.upper()}]"


def _cut_at_start(pattern: str, text: str) -> re.Match[str] | None:
    """The pattern's end, from a word of vLLM's literal text to its last character, where the pasted line begins
    (an issue title quoting the warning's second sentence: `since, enforce-eager is enabled, async output processor
    cannot be used`, vllm#10295); its first letter in either case, as a title writes it. At least
    `MIN_PARTIAL_LITERAL` characters of vLLM's words are kept, and the line holds nothing after them."""
    line = text.strip()
    lead = re.match(r"[A-Za-z]+", line)
    if lead is None:
        return None
    atoms, literal_before = _atoms(pattern)
    for start in _word_starts(atoms, lead.group(0).lower()):
        if literal_before[-1] - literal_before[start] < MIN_PARTIAL_LITERAL:  # the literal text from here on
            return None
        tail = "".join(atoms[start + 1 :]).removesuffix(r"\.")
        try:
            found = re.search(rf"^{_either_case(atoms[start])}{tail}\.?$", line)
        except re.error:
            continue
        if found is not None:
            return found
    return None


# A paste cut at both ends, or around a person's own ellipsis, keeps a run from inside a message: it must hold this much
# of vLLM's literal words (more than a cut at one end, whose other end is anchored where the message starts or ends),
# and something only a message holds: one of its fields' values, a name (`max_num_seqs`, `--flag`, `CamelCase`, a
# number), or `MIN_INSIDE_PLAIN` characters of its words, beyond the length of a common sentence ("Please make sure you
# have the required hardware and software setup" is vLLM's too, and anybody's).
MIN_INSIDE_LITERAL = 36
MIN_INSIDE_PLAIN = 72
_NAME_LIKE = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]|--[a-z]|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\d")
_QUOTES = "`'\" \t"  # around a piece a person quoted


def _pieces(text: str) -> list[tuple[int, str]]:
    """The line's pieces between a person's ellipses, each with its offset, without the quotes around it."""
    out, begin = [], 0
    for end, after in [(m.start(), m.end()) for m in re.finditer(_ELLIPSIS, text)] + [(len(text), len(text))]:
        raw = text[begin:end]
        piece = raw.strip(_QUOTES)
        if piece:
            out.append((begin + raw.index(piece), piece))
        begin = after
    return out


def _cut_inside(pattern: str, text: str) -> re.Match[str] | None:
    """A run of the pattern from a word of vLLM's literal text to any of its characters, where the line's longest
    piece between ellipses holds that run and nothing else, and every other piece is vLLM's words too: `does not
    support matryoshka representation, changing output dimensions will lead to poor` (mem0ai/mem0#3133), `exceeds
    available Mamba cache blocks (95)... CUDA graph capture cannot proceed` (rwlove/home-ops PR #13226). The run keeps
    `MIN_INSIDE_LITERAL` characters of vLLM's words and something only a message holds (`_distinctive`)."""
    pieces = _pieces(text)
    if not pieces:
        return None
    offset, piece = max(pieces, key=lambda item: len(item[1]))
    literal = _GROUP.sub("\x00", pattern).replace("\\", "").lower()
    if any(other.lower() not in literal for _, other in pieces if other != piece):
        return None  # a piece of the person's own ("… Thanks"), or of another message
    lead = re.match(r"[A-Za-z]+", piece)
    if lead is None:
        return None
    atoms, literal_before = _atoms(pattern)
    for start in _word_starts(atoms, lead.group(0).lower()):
        for end in range(len(atoms), start, -1):
            kept = literal_before[end] - literal_before[start]
            if kept > len(piece):  # a field matches one character at least: the run cannot be longer than the piece
                continue
            if kept < MIN_INSIDE_LITERAL:
                break
            if atoms[end - 1].startswith("(?P<") or atoms[end - 1][-1] != piece[-1]:
                continue  # end after vLLM's own words, where the piece's last character is
            run = "".join(atoms[start + 1 : end])
            try:
                found = re.compile(_either_case(atoms[start]) + run).match(text, offset, offset + len(piece))
            except re.error:
                continue
            if found is not None and found.end() == offset + len(piece) and _distinctive(found, kept):
                return found
    return None


def _distinctive(found: re.Match[str], kept: int) -> bool:
    """Whether a run holds something only a message holds: a field's value, a name, or more words than a sentence."""
    has_field = any(value is not None for value in found.groupdict().values())
    return has_field or kept >= MIN_INSIDE_PLAIN or _NAME_LIKE.search(found.group()) is not None


def _said_in(places: Iterable[dict[str, Any]], logged_in: str | None) -> list[dict[str, Any]]:
    """The places in the file a log line's header names (none without one)."""
    named = _file_name(logged_in)
    return [p for p in places if named and _file_name(p["file"]) == named]


def _most_specific_first(found: list[CatalogMatch], logged_in: str | None = None) -> list[CatalogMatch]:
    """Drop a match whose field holds another match (the wrapper of a quoted cause); then the longest
    literal text first, a whole match before a partial one, and among equals one said in the file the line's logger
    names: a paste cut inside words a release raised in one file and a later one logs in another
    (`[argparse_utils.py:257] With \\`vllm serve\\`, you should provide…`) is the logged one."""
    inner = [
        m
        for m in found
        if not any(
            other is not m and any(start <= other.span[0] and other.span[1] <= end for start, end in m.group_spans)
            for other in found
        )
    ]
    return sorted(
        inner or found, key=lambda m: (m.partial, -m.literal_chars, not _said_in(m.entry.get("places", ()), logged_in))
    )
