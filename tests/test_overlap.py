from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore import content_overlap, normalize_text, split_overlap, within_split_duplicates
from evalcore.errors import InvalidInputError


def test_seed_example_only_test_train_overlap():
    splits = {"train": ["a", "b"], "dev": ["c"], "test": ["b", "d"]}
    assert split_overlap(splits) == {("test", "train"): ["b"]}


def test_no_overlap_gives_empty_dict():
    assert split_overlap({"train": ["a"], "dev": ["b"]}) == {}


def test_common_ids_sorted():
    assert split_overlap({"x": ["c", "a", "b"], "y": ["b", "c", "a"]}) == {("x", "y"): ["a", "b", "c"]}


@pytest.mark.parametrize(
    ("splits", "exc", "match"),
    [
        ([["a"]], TypeError, "splits must be a mapping"),
        ({}, ValueError, "splits is empty"),
        ({1: ["a"]}, TypeError, "split name must be str"),
        ({" ": ["a"]}, ValueError, "split name must be non-empty"),
        ({"dev": "abc"}, TypeError, "ids must be a list or tuple"),
        ({"dev": [1]}, TypeError, r"position 0: id must be str, got int 1"),
        ({"dev": ["a", ""]}, ValueError, r"position 1: id is empty"),
        ({"dev": ["a", " a"]}, ValueError, "surrounding whitespace"),
        ({"dev": ["a", "a"]}, ValueError, r"id 'a' is listed twice"),
    ],
)
def test_split_overlap_rejects_bad_input(splits, exc, match):
    with pytest.raises(exc, match=match):
        split_overlap(splits)


def test_renamed_item_passes_id_check_but_content_check_catches_it():
    # The seed's counterexample: same text under a new id slips through split_overlap.
    train = {"t1": "A gripping, well-acted film.", "t2": "dull"}
    dev = {"d9": "a  gripping, WELL-ACTED film. "}
    assert split_overlap({"train": list(train), "dev": list(dev)}) == {}
    assert content_overlap({"train": train, "dev": dev}) == {("dev", "train"): [("d9", "t1")]}


def test_normalization_documented_rules():
    assert normalize_text("  Ａ\tB\n c ") == "a b c"  # NFKC full-width, case, whitespace


def test_content_overlap_rejects_empty_text():
    with pytest.raises(ValueError, match=r"id 'x': text is empty after normalization"):
        content_overlap({"dev": {"x": "  \n"}})


def test_content_overlap_rejects_non_string_text():
    with pytest.raises(TypeError, match="text must be str"):
        content_overlap({"dev": {"x": 3}})


def test_content_overlap_rejects_non_mapping_split():
    with pytest.raises(TypeError, match="items must be a mapping"):
        content_overlap({"dev": ["x"]})


ids = st.text(alphabet="abcdef", min_size=1, max_size=2)
split_maps = st.dictionaries(
    st.sampled_from(["train", "dev", "confirm", "test"]), st.lists(ids, unique=True, max_size=8), min_size=1
)


def brute_force_overlap(splits):
    out = {}
    for a, b in combinations(sorted(splits), 2):
        common = sorted(i for i in splits[a] if any(i == j for j in splits[b]))
        if common:
            out[(a, b)] = common
    return out


@given(split_maps)
def test_property_overlap_matches_brute_force(splits):
    assert split_overlap(splits) == brute_force_overlap(splits)


@given(split_maps)
def test_property_overlap_symmetric_under_renaming_order(splits):
    reversed_splits = {k: list(reversed(v)) for k, v in reversed(list(splits.items()))}
    assert split_overlap(reversed_splits) == split_overlap(splits)


@given(split_maps)
def test_property_content_overlap_equals_id_overlap_when_text_is_id(splits):
    texts = {name: {i: f"text {i}" for i in items} for name, items in splits.items()}
    expected = {pair: [(i, i) for i in common] for pair, common in split_overlap(splits).items()}
    assert content_overlap(texts) == expected


def test_lone_surrogate_text_refused_with_value_error():
    # Regression: hashing a lone surrogate raised UnicodeEncodeError from deep inside text_key.
    with pytest.raises(ValueError, match=r"id 'b': text is not valid Unicode") as info:
        content_overlap({"train": {"a": "fine"}, "dev": {"b": "x\ud800"}})
    assert type(info.value) is InvalidInputError


def test_within_split_duplicates_groups_repeated_texts_per_split():
    splits = {
        "train": {"t3": "a Fine film", "t1": "dull", "t2": "a  fine film ", "t4": "A FINE FILM", "t5": "Dull"},
        "dev": {"d1": "warm", "d2": "flat"},
    }
    assert within_split_duplicates(splits) == {"train": [["t1", "t5"], ["t2", "t3", "t4"]]}


def test_within_split_duplicates_ignores_texts_shared_across_splits():
    splits = {"train": {"t1": "same"}, "dev": {"d1": "same"}}
    assert within_split_duplicates(splits) == {}
    assert content_overlap(splits) == {("dev", "train"): [("d1", "t1")]}


@pytest.mark.parametrize(
    ("splits", "exc", "match"),
    [
        ({}, ValueError, "splits is empty"),
        ({"dev": ["x"]}, TypeError, "items must be a mapping"),
        ({"dev": {"x": 3}}, TypeError, "text must be str"),
        ({"dev": {"x": " "}}, ValueError, "empty after normalization"),
        ({"dev": {" x": "a"}}, ValueError, "surrounding whitespace"),
    ],
)
def test_within_split_duplicates_rejects_what_content_overlap_rejects(splits, exc, match):
    with pytest.raises(exc, match=match):
        within_split_duplicates(splits)


texts = st.dictionaries(ids, st.sampled_from(["good", "Good ", "bad", "ok", "OK"]), max_size=8)


@given(texts)
def test_property_duplicates_account_for_every_repeated_text(items):
    groups = within_split_duplicates({"s": items}).get("s", [])
    distinct = {normalize_text(t) for t in items.values()}
    assert len(items) - sum(len(g) - 1 for g in groups) == len(distinct)
    assert all(len({normalize_text(items[i]) for i in g}) == 1 for g in groups)
