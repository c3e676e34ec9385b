"""The harness as an oracle: lm-eval's own ``HFLM.loglikelihood`` on requests the caller chooses.

Explained in the book chapter *How fast is it?* (``book/performance.md``). Every check that
the independent scorer's fast paths agree with the harness, and every benchmark that times
the harness, builds the harness's model wrapper and its requests here, the way the official
run builds them (CPU, the book's window of :data:`evalcore.scoring.loglik.MAX_LENGTH`
tokens), so no test or benchmark compares against a differently configured harness.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalcore.capture import captured
from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.extras import needs_run_extra
from evalcore.models.interfaces import CausalLM, Tokenizer
from evalcore.scoring.loglik import MAX_LENGTH

if TYPE_CHECKING:
    import lm_eval.api.instance
    import lm_eval.api.model
    import lm_eval.models.huggingface

__all__ = ["harness_instances", "harness_lm", "harness_loglikelihood"]


@needs_run_extra
def harness_lm(model: CausalLM, tokenizer: Tokenizer, *, batch_size: int = 1) -> lm_eval.models.huggingface.HFLM:
    """lm-eval's ``HFLM`` around an already loaded model: CPU, ``batch_size``, the book's window.

    The harness's messages while it builds the wrapper are captured, not printed.

    Raises:
        InvalidTypeError, InvalidInputError: ``batch_size`` is not an int of at least 1.

    Examples:
        >>> from evalcore.models import load_model
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> from evalcore.harness.oracle import harness_lm
        >>> lm = harness_lm(model, tokenizer)
        >>> type(lm).__name__, lm.batch_size, lm.max_length
        ('HFLM', 1, 512)
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int):
        raise InvalidTypeError(f"batch_size must be an int, got {type(batch_size).__name__} {batch_size!r}")
    if batch_size < 1:
        raise InvalidInputError(f"batch_size must be at least 1, got {batch_size}")
    with captured([]):
        from lm_eval.models.huggingface import HFLM

        return HFLM(pretrained=model, tokenizer=tokenizer, device="cpu", batch_size=batch_size, max_length=MAX_LENGTH)


@needs_run_extra
def harness_instances(requests: Sequence[tuple[str, str]]) -> list[lm_eval.api.instance.Instance]:
    """One ``loglikelihood`` ``Instance`` per ``(context, continuation)``, indexed in order.

    Examples:
        >>> from evalcore.harness.oracle import harness_instances
        >>> instances = harness_instances([("Toy:", " bad"), ("Toy:", " good")])
        >>> for i in instances:
        ...     print(i.request_type, i.idx, i.arguments)
        loglikelihood 0 ('Toy:', ' bad')
        loglikelihood 1 ('Toy:', ' good')
    """
    from lm_eval.api.instance import Instance

    return [Instance("loglikelihood", {}, (context, cont), i) for i, (context, cont) in enumerate(requests)]


def harness_loglikelihood(lm: lm_eval.api.model.TemplateLM, requests: Sequence[tuple[str, str]]) -> list[float]:
    """The harness's log-likelihood of each request's continuation, in the order given.

    Examples:
        >>> from evalcore.models import load_model
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> from evalcore.harness.oracle import harness_lm, harness_loglikelihood
        >>> scores = harness_loglikelihood(harness_lm(model, tokenizer),
        ...                                [("Toy:", " bad"), ("Toy:", " good")])
        >>> len(scores), all(s < 0 for s in scores)
        (2, True)
    """
    return [float(ll) for ll, _ in lm.loglikelihood(harness_instances(requests), disable_tqdm=True)]
