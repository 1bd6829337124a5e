"""The tally's oracle: pure functions of the value before the command."""


def after_increment(value: int) -> int:
    return value + 1


def after_reset(value: int) -> int:
    del value
    return 0
