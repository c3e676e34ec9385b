from __future__ import annotations

from evalcore.run import pair_official


def entry(doc_id, content_idx):
    return {"doc_id": doc_id, "content_idx": content_idx}


def test_pairing_by_content_not_by_logged_id():
    official, failures = pair_official([entry(5, 2), entry(2, 5)], [5, 2])
    assert failures == [] and official[2]["doc_id"] == 5 and official[5]["doc_id"] == 2


def test_every_mismatch_between_log_and_request_is_a_failure():
    # Guards against a log that silently covers other items than the ones asked for.
    entries = [entry(1, 1), entry(1, 1), entry(7, 7), entry(9, None)]
    official, failures = pair_official(entries, [1, 3])
    assert list(official) == [1]
    assert failures == [
        "item 1: logged twice",
        "logged doc idx 7 (doc_id 7) was not requested",
        "logged doc with unknown content (doc_id 9)",
        "item 3: no official sample logged",
    ]
