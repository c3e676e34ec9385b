"""The article comparison's helpers: other item sets that never touch the dev or confirm items."""

from __future__ import annotations

import pytest

from evalbook_pages.article import free_pool, item_set_spread, other_item_sets, prepend_effect
from evalcore.errors import InvalidInputError
from evalcore.sst2.selection import CONFIRM_SIZE, DEV_SIZE, VALIDATION_SIZE, confirm_ids, dev_ids


def test_pool_is_every_item_but_dev_and_confirm():
    pool = free_pool()
    assert len(pool) == VALIDATION_SIZE - DEV_SIZE - CONFIRM_SIZE
    assert not set(pool) & (set(dev_ids()) | set(confirm_ids()))


def test_other_sets_are_drawn_from_the_pool_reproducibly_and_differ():
    sets = other_item_sets(3)
    assert sets == other_item_sets(3) and all(len(s) == DEV_SIZE == len(set(s)) for s in sets)
    assert all(set(s) <= set(free_pool()) for s in sets)
    assert len({tuple(sorted(s)) for s in sets}) == 3


@pytest.mark.parametrize(("n_sets", "size"), [(0, 64), (2, 0), (1, 681)])
def test_impossible_sets_refused(n_sets, size):
    with pytest.raises(InvalidInputError, match="from a pool of 680"):
        other_item_sets(n_sets, size)


@pytest.mark.model
def test_prepend_effect_and_set_spread_on_the_real_model(model_and_tokenizer, validation):
    model, tokenizer = model_and_tokenizer
    effect = prepend_effect(model, tokenizer, validation)
    assert effect.token == "<|im_start|>" and effect.token_id == 1 and effect.n == DEV_SIZE
    assert all(0 <= c <= DEV_SIZE for c in effect.correct + effect.predicted_positive)
    spread = item_set_spread(model, tokenizer, validation, n_sets=2)
    assert len(spread.correct) == 2 and spread.size == DEV_SIZE and spread.pool == len(free_pool())
    assert spread.summary["min"] <= spread.summary["median"] <= spread.summary["max"]


def test_the_articles_figures_are_quoted_once_and_add_up():
    from evalbook_pages.article import ARTICLE_LIKELIHOOD
    from evalbook_pages.part3 import ARTICLE_RESULTS

    assert (ARTICLE_LIKELIHOOD["correct"], ARTICLE_LIKELIHOOD["of"]) == ARTICLE_RESULTS["likelihood"]
    quoted = ARTICLE_LIKELIHOOD
    assert quoted["predicted_negative"] + quoted["predicted_positive"] == quoted["of"]


ARTICLE_FILE = "000_d37841f61fdbce33.txt"
"""The source article, in the sources directory beside the repository (``../shared/sources``)."""


def _article_text() -> str:
    import os
    from pathlib import Path

    where = Path(os.environ.get("EVALBOOK_SOURCES_DIR") or Path(__file__).resolve().parents[2] / "shared" / "sources")
    path = where / ARTICLE_FILE
    assert path.is_file(), f"the source article is not at {path}; set EVALBOOK_SOURCES_DIR to its directory"
    return " ".join(path.read_text(encoding="utf-8").split())


def test_the_quoted_figures_are_the_articles_own():
    # Each figure evalcore quotes from the article, read back out of the article's text.
    import re

    from evalbook_pages.article import ARTICLE_LIKELIHOOD
    from evalbook_pages.chain_exercises import ARTICLE_MISFILED

    text = _article_text()
    found = {
        "predictions": re.search(r"模型预测(\d+)条negative、(\d+)条positive", text),
        "labels": re.search(r"开发标签则为(\d+)条负面、(\d+)条正面", text),
        "score": re.search(r"均为(\d+)/(\d+)", text),
        "misfiled": re.search(r"日志题号却有(\d+)处错配", text),
    }
    assert all(found.values()), {k: v for k, v in found.items() if not v}
    got = {k: tuple(int(g) for g in m.groups()) for k, m in found.items() if m}
    quoted = ARTICLE_LIKELIHOOD
    assert got["predictions"] == (quoted["predicted_negative"], quoted["predicted_positive"])
    assert got["labels"] == (quoted["labels_negative"], quoted["labels_positive"])
    assert got["score"] == (quoted["correct"], quoted["of"])
    assert got["misfiled"] == (ARTICLE_MISFILED,)
