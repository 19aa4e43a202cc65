"""Keyword values checked as the loader takes them: a value of another type is a TypeError that names
the keyword, what it takes and what it got ("threads='2': threads takes an int, not str"), never
converted on a guess (bool("False") is True, int(2.5) is 2). The same words as the C++ side's
(python/src/option_values.h), which checks what reaches it directly."""

import numbers as _numbers


def _refuse(name, value, takes):
    raise TypeError(f"{name}={value!r}: {name} takes {takes}, not {type(value).__name__}")


def integer(name, value, minimum=0):
    """An int (numpy's and torch's integers too), at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, _numbers.Integral):
        _refuse(name, value, "an int" if minimum is None else "a non-negative int" if minimum == 0 else
                f"an int of at least {minimum}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}={value}: {name} takes " +
                         ("a non-negative int" if minimum == 0 else f"an int of at least {minimum}"))
    return value


def optional_integer(name, value, minimum=0):
    return None if value is None else integer(name, value, minimum)


def boolean(name, value):
    """True or False (numpy's bool too); 0 and 1 are not guessed at."""
    if type(value).__name__ in ("bool", "bool_"):
        return bool(value)
    _refuse(name, value, "True or False")


def number(name, value):
    if isinstance(value, bool) or not isinstance(value, _numbers.Real):
        _refuse(name, value, "a number")
    return float(value)


def size(name, value):
    """Bytes: an int, or a size as the CLI takes it ("512MB", "2GiB"), which the C++ side parses."""
    if isinstance(value, str):
        return value
    return integer(name, value)


def pair(name, value, of):
    """A (low, high) pair, each checked by `of`."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        _refuse(name, value, "a (low, high) pair")
    return (of(name, value[0]), of(name, value[1]))
