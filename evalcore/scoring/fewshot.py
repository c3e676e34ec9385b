"""Few-shot prompts: exactly as lm-eval 0.4.9.2 builds them, and an item-keyed alternative.

Explained in Part III (``book/part3-fewshot.md``). The harness gives each task one
``random.Random(seed)``
(``fewshot_random_seed``, 1234 by default) and, for every evaluated item in evaluation
order, draws ``k + 1`` training rows from it with ``random.sample`` (``k + 1`` when the
config's few-shot split is its test split, as for sst2, where both are unset; ``k``
otherwise), drops the item itself if it was drawn and keeps the first ``k``. Evaluation order is the dataset order
of the requested items, so an item's demos depend on which *other* items are in the run
and where it stands among them: the same item, in two runs over different subsets, gets
different demos. :func:`harness_demo_ids` reproduces that draw without the harness;
:func:`item_keyed_demo_ids` is the alternative whose demos depend on the seed and the
item only. Only ids are returned: a record stores demo ids, never their text.

Each demo is written ``doc_to_text(demo) + target_delimiter + choice[label]`` and
followed by the few-shot delimiter; the item's own ``doc_to_text`` comes last
(:func:`fewshot_context`).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping, Sequence

from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.protocol.fingerprint import canonical_json
from evalcore.tasks import DEFAULT_FEWSHOT_DELIMITER, Task, TaskItem, default_task

__all__ = [
    "FEWSHOT_DELIMITER",
    "HARNESS_FEWSHOT_SEED",
    "demo_block",
    "demos_digest",
    "fewshot_context",
    "harness_demo_ids",
    "item_keyed_demo_ids",
]

HARNESS_FEWSHOT_SEED = 1234
"""``simple_evaluate``'s default ``fewshot_random_seed``."""

FEWSHOT_DELIMITER = DEFAULT_FEWSHOT_DELIMITER
"""TaskConfig's default ``fewshot_delimiter``, which the sst2 YAML leaves implicit: after every demo."""


def _check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InvalidInputError(f"k (the number of demos) must be an int >= 0, got {k!r}")
    return k


def harness_demo_ids(
    item_ids: Sequence[int],
    k: int,
    pool: Sequence[TaskItem],
    validation: Sequence[TaskItem],
    *,
    seed: int = HARNESS_FEWSHOT_SEED,
    unseal: bool = False,
    task: Task | None = None,
) -> dict[int, tuple[int, ...]]:
    """The train idx of the demos lm-eval 0.4.9.2 puts before each item, for one run over ``item_ids``.

    Args:
        item_ids: the run's validation items (the harness's ``samples``); their order does
            not matter, the harness evaluates them in dataset order.
        k: demos per item (``num_fewshot``).
        pool: the train split in idx order (the harness's few-shot pool).
        validation: the validation split, to recognise an item drawn as its own demo.
        seed: ``fewshot_random_seed``.
        task: whose items these are (:func:`evalcore.tasks.default_task` when not given).

    Returns:
        ``{item_id: (train idx, ...)}``, demos in prompt order.

    Raises:
        ValueError, TypeError, SealedItemError: bad ids (``check_ids``) or a bad ``k``.

    Examples:
        >>> from evalcore import load_split
        >>> from evalcore.scoring import harness_demo_ids
        >>> train, validation = load_split("train"), load_split("validation")
        >>> harness_demo_ids([537, 592], 2, train, validation)
        {537: (57767, 15315), 592: (11880, 4577)}
        >>> harness_demo_ids([592], 2, train, validation)
        {592: (57767, 15315)}
    """
    task = task or default_task()
    ids = task.check_ids(item_ids, unseal=unseal)
    k = _check_k(k)
    if k == 0:
        return {i: () for i in ids}
    # samplers.py get_context: k + 1 draws when the config's few-shot split equals its test split
    # (both unset for sst2; TaskSpec.draws_one_more), else k; the evaluated document dropped if
    # drawn, the first k kept
    draws = k + 1 if task.spec.draws_one_more else k
    if len(pool) < draws:
        raise InvalidInputError(f"a pool of {len(pool)} rows cannot give {draws} distinct draws")
    rnd = random.Random(seed)
    demos = {}
    for item_id in sorted(ids):  # evaluation order: dataset order of the requested items
        drawn = rnd.sample(range(len(pool)), draws)
        own = validation[item_id].as_doc()
        demos[item_id] = tuple(pool[j].idx for j in drawn if pool[j].as_doc() != own)[:k]
    return demos


def item_keyed_demo_ids(
    item_id: int, k: int, pool_size: int, *, seed: int = HARNESS_FEWSHOT_SEED, task: Task | None = None
) -> tuple[int, ...]:
    """Demos that depend on the seed and the item only: the same in every run that contains the item.

    A generator seeded with the string ``"{seed}:{item_id}"`` (hashed by Python's own
    string seeding, stable across versions and machines) draws ``k`` distinct train idx.

    Examples:
        >>> from evalcore.scoring import item_keyed_demo_ids
        >>> from evalcore.sst2 import TRAIN_SIZE
        >>> item_keyed_demo_ids(537, 4, TRAIN_SIZE)
        (43401, 66558, 32676, 61667)
    """
    (task or default_task()).check_ids([item_id], unseal=True)  # type and range only: choosing demos scores nothing
    k = _check_k(k)
    if pool_size <= k:
        raise InvalidInputError(f"a pool of {pool_size} rows cannot give {k} distinct demos")
    return tuple(random.Random(f"{seed}:{item_id}").sample(range(pool_size), k))


def demos_digest(demos: Mapping[int, Sequence[int]]) -> str:
    """SHA-256 of the canonical JSON of ``{item_id: [train idx, ...]}``: what a protocol's ``demos_sha256`` holds.

    Raises:
        TypeError: an id that is not an int.

    Examples:
        >>> from evalcore.scoring import demos_digest
        >>> demos_digest({537: [57767, 15315]})[:12]
        '167215cc229f'
    """
    body = {}
    for item, ids in demos.items():
        if (
            isinstance(item, bool)
            or not isinstance(item, int)
            or any(isinstance(j, bool) or not isinstance(j, int) for j in ids)
        ):
            raise InvalidTypeError(f"demo ids must be ints keyed by an int item id, got {item!r}: {list(ids)!r}")
        body[str(item)] = list(ids)
    return hashlib.sha256(canonical_json(body)).hexdigest()


def demo_block(
    demos: Sequence[TaskItem],
    *,
    render: Callable[[str], str] | None = None,
    target_delimiter: str | None = None,
    choices: Sequence[str] | None = None,
    task: Task | None = None,
) -> str:
    r"""The demos as the harness writes them before an item: each answered, each followed by the delimiter.

    The one demo-prompt builder: the task's own format by default
    (:meth:`evalcore.tasks.Task.demo_block`); Part III's conditions pass their own template
    (``render``, called with the value of the one field the task's template fills in),
    delimiter and answer words. Pass the result as ``demo_block`` to
    :func:`evalcore.scoring.loglik.score_item` to score an item with them.

    Examples:
        >>> from evalcore.scoring import demo_block
        >>> from evalcore.sst2 import Row
        >>> demos = [Row(0, "Fun.", 1), Row(1, "Dull.", 0)]
        >>> demo_block(demos[:1])
        'Fun.\nQuestion: Is this sentence positive or negative?\nAnswer: positive\n\n'
        >>> def review(text):
        ...     return f"Review: {text} Sentiment:"
        >>> demo_block(demos, render=review, choices=("bad", "good"))
        'Review: Fun. Sentiment: good\n\nReview: Dull. Sentiment: bad\n\n'
    """
    task = task or default_task()
    if render is None and target_delimiter is None and choices is None:
        return task.demo_block(demos)
    spec = task.spec
    text = [spec.doc_to_text(d.as_doc()) if render is None else render(task.field_text(d)) for d in demos]
    delimiter = spec.target_delimiter if target_delimiter is None else target_delimiter
    answers = [spec.choices_of(d.as_doc()) if choices is None else tuple(choices) for d in demos]
    end = spec.fewshot_delimiter
    return "".join(t + delimiter + a[d.label] + end for t, a, d in zip(text, answers, demos, strict=True))


def fewshot_context(demos: Sequence[TaskItem], item: TaskItem, *, task: Task | None = None) -> str:
    """The context string of one item with its demos, as the harness writes it.

    An empty ``demos`` gives the zero-shot context, the item's ``doc_to_text``.

    Examples:
        >>> from evalcore.scoring import fewshot_context
        >>> from evalcore.sst2 import Row
        >>> print(fewshot_context([Row(0, "Fun.", 1)], Row(1, "A toy review.", 0)))
        Fun.
        Question: Is this sentence positive or negative?
        Answer: positive
        <BLANKLINE>
        A toy review.
        Question: Is this sentence positive or negative?
        Answer:
    """
    task = task or default_task()
    return task.demo_block(demos) + task.text(item)
