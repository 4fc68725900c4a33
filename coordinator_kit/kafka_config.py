"""Reading and checking Kafka-style settings, and the kit's own arguments, in one style.

Runtime, group coordinator and consumer configs all accept Kafka's dotted keys; this is the one
place that maps them to field names and refuses an unknown key by name, listing the known ones.

A config value of the wrong type or out of range is refused as Kafka's `ConfigDef` refuses it,
with a `ConfigException`-like message that names the key, the value and what is allowed
(`Invalid value '100' for configuration retry.backoff.ms: Expected value to be a 64-bit
integer ...`); the config classes raise ValueError, as they always did. The kit's own arguments
(a broker count, a duration, a flag) are refused with TypeError for a wrong type and ValueError
for a value out of range, naming the argument. In Python `True` is an int: both refuse it where
a number is expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["fields_from_properties", "config_error", "check_config_int", "check_config_bool",
           "check_config_str", "check_whole", "check_flag"]


def fields_from_properties(props: Mapping[str, Any], attr_of: Mapping[str, str],
                           what: str) -> dict[str, Any]:
    """`{field name: value}` for `props`; `attr_of` maps each Kafka key to its field."""
    if not isinstance(props, Mapping):
        example = next(iter(attr_of), "key")
        raise TypeError(f"{what} configs are a mapping of Kafka key to value, e.g. "
                        f"{{{example!r}: ...}}, got {type(props).__name__} {props!r}")
    kwargs = {}
    for key, value in props.items():
        if key not in attr_of:
            raise ValueError(f"unknown {what} config {key!r}; known keys: "
                             f"{', '.join(sorted(attr_of))}")
        kwargs[attr_of[key]] = value
    return kwargs


def config_error(key: str, value: Any, reason: str) -> ValueError:
    """Kafka's `ConfigException(name, value, message)` wording, as a ValueError."""
    return ValueError(f"Invalid value {value!r} for configuration {key}: {reason}")


def _kind(value: Any) -> str:
    """What a value is, for a message: None, an int, a str."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _got(value: Any) -> str:
    return "None" if value is None else f"{value!r} ({_kind(value)})"


def check_config_int(key: str, value: Any, *, at_least: int, bits: int = 32) -> None:
    """A Kafka INT (32 bits), LONG (64) or SHORT (16) config with `Range.atLeast(at_least)`."""
    if isinstance(value, bool) or not isinstance(value, int):
        hint = ""
        if isinstance(value, str) and value.strip().lstrip("-").isdecimal() \
                and value.strip().isascii():
            hint = f" (write {int(value)}, not {value!r})"
        raise config_error(key, value, f"Expected value to be a {bits}-bit integer at least "
                                       f"{at_least}, but it was {_kind(value)}{hint}")
    if value < at_least:
        raise config_error(key, value, f"Value must be at least {at_least}")
    high = 2 ** (bits - 1) - 1
    if value > high:
        raise config_error(key, value, f"Value must be at most {high} (a {bits}-bit integer)")


def check_config_bool(key: str, value: Any) -> None:
    """A Kafka BOOLEAN config: True or False (not "no", not 0)."""
    if not isinstance(value, bool):
        raise config_error(key, value, f"Expected value to be either True or False, but it "
                                       f"was {_kind(value)}")


def check_config_str(key: str, value: Any, *, nullable: bool = False) -> None:
    """A Kafka STRING config (None allowed when `nullable`, as Kafka's null default)."""
    if value is None and nullable:
        return
    if not isinstance(value, str):
        allowed = "a string or None" if nullable else "a string"
        raise config_error(key, value, f"Expected value to be {allowed}, but it was "
                                       f"{_kind(value)}")


def check_whole(name: str, value: Any, *, at_least: int | None, ms: bool = False) -> None:
    """An argument that is a whole number (of milliseconds when `ms`), at least `at_least`
    unless that is None."""
    if isinstance(value, bool) or not isinstance(value, int):
        of = " of milliseconds" if ms else ""
        low = "" if at_least is None else f" >= {at_least}"
        raise TypeError(f"{name} is a whole number{of}{low}, got {_got(value)}")
    if at_least is not None and value < at_least:
        raise ValueError(f"{name} must be >= {at_least}{' ms' if ms else ''}, got {value}")


def check_flag(name: str, value: Any) -> None:
    """An argument that is True or False (a string such as "no" is truthy in Python)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} is True or False, got {_got(value)}")
