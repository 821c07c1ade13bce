"""One package per chapter: the facts its prose states (a frozen dataclass of numbers, names and
flags computed from the rows, tested numerically), never its sentences."""
