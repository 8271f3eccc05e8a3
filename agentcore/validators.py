"""Checks of the values users set, one kit for the core and the plugins.

Each check is a :class:`Rule`: what a value must be, in words, and the test.
A rule is an attrs validator and a plain check at once, so an attrs field,
a builder method, a dict of settings and a command-line flag reach the same
test and the same message::

    from attrs import field, frozen
    from agentcore.validators import POSITIVE_INT, RATIO, one_of

    @frozen
    class MyConfig:
        ratio: float = field(default=0.5, validator=RATIO)
        limit: int | None = field(default=None, validator=POSITIVE_INT.or_none())
        mode: str = field(default="fast", validator=one_of("fast", "slow"))

    MyConfig(limit=0)
    # ConfigError: MyConfig.limit must be an int >= 1 or None, got 0

    POSITIVE_INT.check("max_rounds", rounds)  # outside attrs: the same words

A refused value raises :class:`~agentcore.errors.ConfigError` (a
:class:`ValueError`) that names the field and shows the value. Numbers
never accept a bool (``True`` is an ``int`` to Python, never a count to a
user), and floats must be finite.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeGuard, TypeVar

import attrs
from attrs import frozen

from agentcore.errors import ConfigError

__all__ = [
    "BOOL",
    "NON_EMPTY_STR",
    "NON_NEGATIVE_INT",
    "POSITIVE_INT",
    "POSITIVE_NUMBER",
    "RATIO",
    "STR",
    "Rule",
    "at_least",
    "field_name",
    "instance_of",
    "is_int",
    "is_number",
    "one_of",
]

T = TypeVar("T")


def is_int(value: object) -> TypeGuard[int]:
    """Whether ``value`` is an int and not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    """Whether ``value`` is a finite int or float, and not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def field_name(instance: object, attribute: attrs.Attribute[Any]) -> str:
    """How a message names an attrs field: ``Class.field`` (the argument's name, not ``_field``)."""
    name = getattr(attribute, "alias", None) or attribute.name
    return f"{type(instance).__name__}.{name}"


@frozen
class Rule:
    """What a value must be (``expected``, in words) and the ``test`` that says whether it is.

    Use it as an attrs validator (``field(validator=rule)``: the message
    names ``Class.field``) or call :meth:`check` with a name of your own.
    """

    expected: str
    """The words after "must be", such as ``"an int >= 1"``."""
    test: Callable[[Any], bool]
    """True for a value the rule accepts."""

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` passes the rule."""
        return self.test(value)

    def check(self, name: str, value: T) -> T:
        """Return ``value``, or raise :class:`ConfigError` naming ``name`` and the value."""
        if not self.test(value):
            raise ConfigError(f"{name} must be {self.expected}, got {value!r}")
        return value

    def __call__(self, instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
        """The attrs validator: :meth:`check` with the field's name (named only on a refusal)."""
        if not self.test(value):
            self.check(field_name(instance, attribute), value)

    def or_none(self) -> Rule:
        """The same rule, with None accepted too (``"... or None"`` in the message)."""
        test = self.test
        return Rule(f"{self.expected} or None", lambda value: value is None or test(value))

    def named(self, expected: str) -> Rule:
        """The same test, described as ``expected`` (for words that fit the field better)."""
        return Rule(expected, self.test)

    def where(self, also: Callable[[Any], bool], expected: str) -> Rule:
        """A stricter rule: this one's test and ``also``, described as ``expected``."""
        test = self.test
        return Rule(expected, lambda value: test(value) and also(value))


def at_least(minimum: int) -> Rule:
    """An int (not a bool) of ``minimum`` or more."""
    return Rule(f"an int >= {minimum}", lambda value: is_int(value) and value >= minimum)


def one_of(*choices: object) -> Rule:
    """One of ``choices`` (compared with ``==``), such as ``one_of("inline", "background")``."""
    shown = [repr(choice) for choice in choices]
    words = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
    return Rule(f"one of {words}", lambda value: value in choices)


def instance_of(kind: type[Any] | tuple[type[Any], ...], expected: str | None = None) -> Rule:
    """An instance of ``kind``; ``expected`` words it (default: ``"a <kind name>"``)."""
    if expected is None:
        names = kind if isinstance(kind, tuple) else (kind,)
        expected = " or ".join(f"a {name.__name__}" for name in names)
    return Rule(expected, lambda value: isinstance(value, kind))


POSITIVE_INT = at_least(1)
"""An int >= 1 (a count, a size, a limit)."""

NON_NEGATIVE_INT = at_least(0)
"""An int >= 0."""

POSITIVE_NUMBER = Rule("a positive finite number", lambda value: is_number(value) and value > 0)
"""A finite int or float > 0 (seconds, a rate); ``.or_none()`` for "no limit"."""

RATIO = Rule("a number in (0, 1]", lambda value: is_number(value) and 0 < value <= 1)
"""A finite number above 0 and at most 1 (a share of a window)."""

BOOL = Rule("True or False", lambda value: isinstance(value, bool))
"""A bool: ``1`` and ``"yes"`` are refused."""

STR = instance_of(str)
"""Any str, the empty one included."""

NON_EMPTY_STR = Rule(
    "a non-empty str", lambda value: isinstance(value, str) and bool(value.strip())
)
"""A str with something besides white space in it."""
