"""advice.json, typed: the one definition of what ``jacbench advise`` writes and chapter 8 reads.

Each record's dataclass fields are its keys in the file, in the file's order; ``to_json`` writes
them and ``from_json`` reads them back, so that a file round-trips to equal JSON. A key the file
may lack is written only where the field it depends on says so (``only_if``): a strategy's
prediction only where it was fitted, a size's measurement only where it was run. It lives in
report, the lower of the two rooms that use it (advise writes it, the chapter reads it).
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import NoneType, UnionType
from typing import Self

FILE = "advice.json"
# A JSON object as the file holds it.
JSON = dict[str, object]


def _only_if(gate: str, default: object = None) -> object:
    """A field written only where the field named gate holds something (not None, not False)."""
    return field(default=default, metadata={"only_if": gate})


def _flag() -> bool:
    """A field not in the file: whether the keys written only_if it were there."""
    return field(default=True, metadata={"in_file": False})


def _encode(value: object) -> object:
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _encode(v) for k, v in value.items()}
    return value


def _decode(kind: object, value: object) -> object:
    """value read from JSON as kind: a record, a tuple, a mapping of them, or as it is."""
    if value is None:
        return None
    if isinstance(kind, UnionType) or typing.get_origin(kind) is typing.Union:
        kinds = [k for k in typing.get_args(kind) if k is not NoneType]
        if len(kinds) > 1:  # str | int: a plain value
            return value
        (kind,) = kinds
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if isinstance(kind, type) and issubclass(kind, Record):
        return kind.from_json(value)
    if origin is tuple:
        each = args[:1] * len(value) if args[-1:] == (Ellipsis,) else args
        return tuple(_decode(k, v) for k, v in zip(each, value, strict=True))
    if origin is Mapping:
        return {k: _decode(args[1], v) for k, v in value.items()}
    return value


class Record:
    """A record of advice.json (a frozen dataclass): its fields are its keys."""

    def to_json(self) -> JSON:
        out = {}
        for f in dataclasses.fields(self):
            gate = f.metadata.get("only_if")
            if f.metadata.get("in_file", True) and (
                gate is None or getattr(self, gate) not in (None, False)
            ):
                out[f.name] = _encode(getattr(self, f.name))
        return out

    @classmethod
    def from_json(cls, raw: Mapping) -> Self:
        kinds = typing.get_type_hints(cls)
        gates = {g.name: g.metadata.get("only_if") for g in dataclasses.fields(cls)}
        found = {}
        for f in dataclasses.fields(cls):
            if not f.metadata.get("in_file", True):
                found[f.name] = any(k in raw for k, gate in gates.items() if gate == f.name)
            elif f.name in raw:
                found[f.name] = _decode(kinds[f.name], raw[f.name])
        return cls(**found)

    @classmethod
    def of(cls, found: Mapping) -> Self:
        """The record's keys taken from a larger mapping (the probe's findings)."""
        return cls.from_json({k: v for k, v in found.items() if k in cls.keys()})

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls) if f.metadata.get("in_file", True))


_record = dataclass(frozen=True, kw_only=True)


@_record
class Row(Record):
    """One size's measurement: the warm calls' median, fastest and slowest and how many, the
    first call, the error against the reference, the warm calls' peak beyond the inputs (the
    first call's beside), how long its worker ran. A size not run (ran False: too slow) keeps
    its n, status and message alone."""

    n: int
    status: str
    message: str = ""
    warm_median_s: float | None = _only_if("ran")
    warm_min_s: float | None = _only_if("ran")
    warm_max_s: float | None = _only_if("ran")
    warm_n: int | None = _only_if("ran")
    cold_s: float | None = _only_if("ran")
    max_rel_error: float | None = _only_if("ran")
    peak_bytes: int | None = _only_if("ran")
    cold_peak_bytes: int | None = _only_if("ran")
    wall_s: float | None = _only_if("ran")
    ran: bool = _flag()

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@_record
class StrategyRow(Row):
    """A strategy's row, with the function's own warm time at its size and the strategy's in
    calls of it (evaluations), where both were measured."""

    function_s: float | None = None
    evaluations: float | None = None


@_record
class Measured(Row):
    """The pick measured at the target (--check, its median worker): predicted over measured,
    for time and peak, and whether the time lies inside the interval (None: no usable one)."""

    time_ratio: float | None = _only_if("time_ratio")
    peak_ratio: float | None = _only_if("time_ratio")
    within_interval: bool | None = _only_if("time_ratio")


@_record
class Fitted(Record):
    """A fit as the file keeps it (advise.fit.Fit): fixed + scale * n ** exponent, with what
    says how sure it is; None where the fit has inf (an early advice kept the first three)."""

    scale: float
    exponent: float
    fixed: float = 0.0
    spread: float | None = None
    points: int
    log_sd: float | None = None
    dof: float | None = None
    noise: float = 0.0
    x_mean: float = 0.0
    sxx: float = 0.0
    slope: float | None = None  # None: the exponent
    slope_interval: tuple[float | None, float | None] = (None, None)


@_record
class Strategy(Record):
    """One generic strategy (strategies.generic): its registry fields, what happened to it, its
    rows, and where it was fitted its prediction at the target with its interval and flags."""

    name: str
    mode: str
    call: str = ""
    description: str = ""
    per_row: bool = False
    compiled: bool = False
    reference: bool = False
    status: str
    reason: str = ""
    rows: tuple[StrategyRow, ...] = ()
    predicted_s: float | None = None
    predicted_cold_s: float | None = None
    predicted_peak_bytes: float | None = None
    predicted_interval_s: tuple[float | None, float | None] | None = _only_if("fits")
    predicted_spread: float | None = _only_if("fits")
    exponent: float | None = _only_if("fits")
    exponent_interval: tuple[float | None, float | None] | None = _only_if("fits")
    flags: tuple[str, ...] = _only_if("fits", ())
    flags_said: tuple[str, ...] = _only_if("fits", ())
    fits: Mapping[str, Fitted] | None = _only_if("fits")

    @property
    def ok_rows(self) -> tuple[StrategyRow, ...]:
        return tuple(r for r in self.rows if r.ok)


@_record
class Worker(Record):
    """A strategy measured again at the target: the median of its workers' warm medians, the
    fastest and slowest of them, and how many workers."""

    median_s: float
    low_s: float
    high_s: float
    workers: int


@_record
class Checked(Record):
    """What --check measured at the target and picked from it: the fastest, those tied with it,
    each one's workers, the leaders that failed there and how, the pick the prediction made,
    whether that changed, the target and every row measured there."""

    strategy: str
    tied: tuple[str, ...] = ()
    strategies: Mapping[str, Worker] = field(default_factory=dict)
    failed: Mapping[str, str] = field(default_factory=dict)
    predicted_pick: str | None = None
    changed: bool = False
    n: int | None = None
    rows: Mapping[str, tuple[Row, ...]] = field(default_factory=dict)


@_record
class Pick(Record):
    """The pick for repeated calls (what ranked it, its prediction at the target, those it does
    not beat, in words why), the pick for one call, those over the memory cap; overhead where
    its calls measured the framework's; what --check measured, where it ran."""

    strategy: str
    basis: str = "predicted"
    predicted_s: float | None = None
    predicted_interval_s: tuple[float | None, float | None] | None = None
    predicted_cold_s: float | None = None
    predicted_peak_bytes: float | None = None
    flags: tuple[str, ...] = ()
    tied: tuple[str, ...] = ()
    why: str = ""
    one_call: str = ""
    one_call_tied: tuple[str, ...] = ()
    one_call_differs: bool = False
    over_cap: Mapping[str, float] = field(default_factory=dict)
    overhead: bool = _only_if("overhead", False)
    checked: Checked | None = _only_if("checked")
    measured: Measured | None = _only_if("measured")


@_record
class Check(Record):
    """What the probe found of the reference derivative: the strategy it came from, and the
    float64 finite differences' status, error, share of outputs agreeing, directions and step."""

    reference: str | None = None
    fd_status: str | None = None
    fd_error: float | None = None
    fd_agree: float | None = None
    fd_directions: int | None = None
    fd_step: float | None = None


@_record
class Bumped(Record):
    """One input bumped and repriced: the per-row derivative's mean, the bumped one, its
    standard error and step, and whether they differ (a jump)."""

    input: int
    per_row_mean: float
    bumped_mean: float
    standard_error: float
    step: float
    jumps: bool


@_record
class Boundary(Record):
    """The probe's bump and reprice of each input ("not run: ..." where it could not)."""

    status: str
    inputs: tuple[Bumped, ...] | None = _only_if("inputs")
    jumps: bool | None = _only_if("inputs")


@_record
class Batch(Record):
    """With --batch: the samples B, and a sample's inputs and outputs."""

    samples: int
    inputs: int
    outputs: int


@_record
class Rule(Record):
    """How the pick was ranked: the intervals' level, the floor, how far past the data a
    prediction is flagged, the margin (1: this run's own spreads)."""

    level: float
    floor_s: float
    far: float
    margin: float


@_record
class Function(Record):
    """The function itself, timed at each size: the call and its rows."""

    call: str = ""
    status: str
    rows: tuple[Row, ...] = ()


@_record
class Load(Record):
    """Cores other processes kept busy: before the run, on average and at most between the
    workers (samples taken); busy where that average passed a half core. An advice of the first
    version kept the load average before and after instead."""

    cores: int
    before: float | None = None
    after: float | None = _only_if("after")
    during_mean: float | None = _only_if("samples")
    during_max: float | None = _only_if("samples")
    samples: int | None = _only_if("samples")
    busy: bool = False


@_record
class Advice(Record):
    """One advice: the request, the function (its shape, batch and blocks, dtype, the check of
    its derivative, its own time, the data's largest array at the probe's size, the boundary),
    the machine, every strategy, the pick, the rule, the function's own rows, the load, and the
    code to paste."""

    function: str
    factory: str = ""
    framework: str
    order: int = 1
    inputs: int
    outputs: int
    rows_of_data: int | None = None
    batch: Batch | None = None
    blocks: int | None = None
    block_shape: tuple[int, int] | None = None
    dtype: str = "float32"
    sizes: tuple[int, ...]
    fit_from: int = 0
    auto_sizes: bool = False
    sizes_note: str = ""
    target: int
    mem_cap_bytes: int | None = None
    timeout_s: float | None = None
    threads: int | None = None
    check: Check = field(default_factory=Check)
    function_s: float | None = None
    data_bytes: int | None = None  # the data's largest array at the probe's size, probe_n
    probe_n: int | None = None
    boundary: Boundary | None = None
    environment: Mapping[str, str | int | None] = field(default_factory=dict)
    cwd: str = ""
    strategies: tuple[Strategy, ...] = ()
    pick: Pick | None = None
    rule: Rule | None = None
    baseline: Function | None = _only_if("baseline")
    load: Load | None = None
    code: str = ""

    def strategy(self, name: str) -> Strategy:
        return next(s for s in self.strategies if s.name == name)

    def write(self, path: Path) -> None:
        """The file at path, written whole (a reader never sees half of it)."""
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=1, default=str) + "\n")
        tmp.replace(path)

    @classmethod
    def read(cls, path: str | Path) -> Self:
        """A folder's advice.json, or the file itself."""
        path = Path(path)
        return cls.from_json(json.loads((path / FILE if path.is_dir() else path).read_text()))
