"""The attributes of a summary's span, from the summary and the gate's quality record."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentcore_otel import attributes as attr

if TYPE_CHECKING:  # autosummary's types: the plugin loads without autosummary
    from agentcore_autosummary import SummaryInfo, SummaryQuality


def quality_attributes(quality: SummaryQuality) -> dict[str, Any]:
    """The span attributes of the gate's record ``quality``."""
    return {
        attr.SUMMARY_VERDICT: quality.verdict,
        attr.SUMMARY_STOP_REASON: quality.stop_reason,
        attr.SUMMARY_OVERLAP: quality.overlap_with_previous,
        attr.SUMMARY_ECHOED_SHARE: quality.echoed_share,
        attr.SUMMARY_IDENTIFIERS_KEPT: len(quality.identifiers_kept),
        attr.SUMMARY_IDENTIFIERS_LOST: len(quality.identifiers_lost),
        attr.SUMMARY_ROUTE: quality.route,
        attr.SUMMARY_ATTEMPTS: quality.attempts,
        attr.SUMMARY_REFUSED: list(quality.refused),
    }


def applied_attributes(summary: SummaryInfo) -> dict[str, Any]:
    """The span attributes of an applied ``summary``, its quality record's included."""
    attributes: dict[str, Any] = {
        attr.SUMMARY_APPLIED: True,
        attr.SUMMARY_REASON: summary.reason,
        attr.SUMMARY_COVERS: summary.covers,
        attr.SUMMARY_TOKENS_BEFORE: summary.tokens_before,
        attr.SUMMARY_TOKENS_AFTER: summary.tokens_after,
    }
    if getattr(summary, "tokens_estimated", False):  # an older autosummary has no such field
        attributes[attr.SUMMARY_TOKENS_ESTIMATED] = True
    if summary.usage is not None:
        attributes[attr.USAGE_INPUT_TOKENS] = summary.usage.input_tokens
        attributes[attr.USAGE_OUTPUT_TOKENS] = summary.usage.output_tokens
    if summary.model is not None:
        attributes[attr.REQUEST_MODEL] = summary.model
    if summary.quality is not None:
        attributes.update(quality_attributes(summary.quality))
    return attributes


def error_quality(error: BaseException) -> SummaryQuality | None:
    """The quality record a refused summary's error carries, if any."""
    quality = getattr(error, "quality", None)
    try:
        from agentcore_autosummary import SummaryQuality
    except ImportError:  # without autosummary, no summary error reaches this plugin
        return None
    return quality if isinstance(quality, SummaryQuality) else None
