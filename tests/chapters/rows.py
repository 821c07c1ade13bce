"""Row helpers the chapter tests share: one fixture row found, its columns set, a changed copy."""

import pandas as pd


def at(df, framework, strategy, paths=None, inputs=None, problem=None):
    """The index of the one fixture row of a strategy at a size (float32, glibc), of the GBM
    where a number of paths is given (the Asian payoff runs some strategies on the same
    paths) unless another problem is."""
    mask = (df["framework"] == framework) & (df["strategy"] == strategy)
    if problem or paths is not None:
        mask &= df["problem"] == (problem or "gbm")
    mask &= (df["dtype"] == "float32") & (df["allocator"] == "glibc")
    if paths is not None:
        mask &= df["paths"] == paths
    if inputs is not None:
        mask &= df["inputs"] == inputs
    (index,) = df.index[mask.fillna(False).astype(bool)]
    return index


def edit(df, index, **values):
    """Set columns of one row in place."""
    for column, value in values.items():
        df.loc[index, column] = value
    return df


def copy(df, index, **values):
    """The frame with a copy of one row added, some columns changed."""
    row = df.loc[[index]].copy()
    row.index = [df.index.max() + 1]
    return edit(pd.concat([df, row]), row.index[0], **values)
