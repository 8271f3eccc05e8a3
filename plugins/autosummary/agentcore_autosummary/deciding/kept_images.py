"""Which images a summary keeps in the request: the newest, while they fit.

``SummaryConfig.keep_images`` is how many images of the conversation's history the
request keeps carrying once a summary covers their messages: the images of the
verbatim tail count first (they are sent anyway), and the messages holding the
newest of the others are pinned by the plugin, sent verbatim right before the
tail. They must fit :func:`image_room`; an image that does not is recorded in
the summary instead (``agentcore_autosummary.applying.record``).
"""

from __future__ import annotations

from collections.abc import Iterable

from attrs import frozen

from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.token_correction import TokenCorrection


@frozen
class KeepUnit:
    """A message holding images and what is pinned with it (its tool call and results).

    :param image: The raw index of the message holding the images.
    :param indices: The raw indices pinned to keep it, in order.
    :param images: How many images those messages hold.
    :param tokens: Their local token count.
    """

    image: int
    indices: tuple[int, ...]
    images: int
    tokens: int


def image_room(
    config: SummaryConfig, correction: TokenCorrection, model: str | None, fixed: int
) -> int:
    """Local tokens the kept images may take after a summary.

    Half of what the watermark leaves once ``fixed`` (the system prompt, the
    user's pins and the record of attachments, counted) and the room the
    summary and the verbatim tail may take (``summary_context_tokens``,
    ``recent_budget``) are set aside: a summarized context stays below the
    watermark with room to grow before the next summary.
    """
    watermark = correction.unapply(model, config.trigger_tokens)
    tail = correction.unapply(model, config.recent_budget)
    left = watermark - tail - config.summary_context_tokens - fixed
    return max(0, left // 2)


def choose_kept(units: Iterable[KeepUnit], images: int, room: int) -> list[KeepUnit]:
    """The units kept: newest first, while their images fit ``images`` and their tokens ``room``.

    A unit that does not fit is passed over (recorded instead); an older, smaller
    one may still fit. Returned oldest first.
    """
    kept: list[KeepUnit] = []
    count = tokens = 0
    for unit in sorted(units, key=lambda unit: unit.image, reverse=True):
        if count + unit.images > images or tokens + unit.tokens > room:
            continue
        kept.append(unit)
        count += unit.images
        tokens += unit.tokens
    return sorted(kept, key=lambda unit: unit.image)
