"""The module's integer arguments checked in Python, before they reach the compiled part, whose
binding would answer an int out of C++'s range with pybind11's list of overloads instead of one
readable line."""
import numpy as np


def checked_int(value, what, low, high):
    """`value` as an int in [low, high): a TypeError for anything but an integer (a bool is not
    one), a ValueError naming `what` outside the range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {value!r}")
    value = int(value)
    if value < low:
        raise ValueError(f"{what} must be >= {low}, got {value}")
    if value >= high:
        top = "2**63" if high == 2**63 else "2**31" if high == 2**31 else str(high)
        raise ValueError(f"{what} must be below {top}, got {value}")
    return value
