"""Labels at the ends of a figure's lines: each beside its line's end, moved apart where
they would overlap and off the lines that go on past that end, wrapped at hyphens where a long
name would leave the panel, and thinned where a panel cannot hold them all; and the words on a
failure line ("timeout 300 s")."""

from __future__ import annotations

import numpy as np

LABEL_SIZE = 10.5
LABEL_CHARS = 13  # longer names wrap at their hyphens, where they end at the right edge
# A character's width in ems, for a label's box in the layout; rendered, these names in bold
# DejaVu Sans with the box's pad take about 0.66 em a character, and the panel narrows after the
# labels are placed (the figure's layout makes room for them), so the last step, which leaves
# out a label that would run into one further right, allows 0.85 (at 0.6 "jacfwd" beside 10^6
# ran into "blocked-pathwise" at 10^7, the boxes counted apart).
CHAR_EM = 0.6
RENDERED_EM = 0.85
ROOM_FOR_LABELS = 0.95  # of a panel's height: what the line-end labels may take together


def wrapped(text: str, width: int = LABEL_CHARS) -> str:
    """A long name on several lines, broken after a hyphen or at a space, never in a word."""
    lines = [""]
    for part in text.replace("-", "-\n").replace(" ", " \n").split("\n"):
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(line.rstrip() for line in lines)


def place_labels(ax, anchors: list[tuple], drop_first: str | None = None) -> None:
    """Each label just right of its line's end, moved apart vertically where labels would
    overlap or hide a line going on past that end (with a thin leader back to the end); labels
    past the right edge are kept."""
    fig = ax.figure
    fig.draw_without_rendering()
    box = ax.get_position()
    w_pt, h_pt = box.width * fig.get_figwidth() * 72, box.height * fig.get_figheight() * 72
    to_axes = ax.transScale + ax.transLimits
    items = []
    for x, y, text, colour, bold in anchors:
        fx, fy = to_axes.transform((x, y))
        # A label past the right edge takes width from the panel: it wraps short; one inside,
        # beside a line that ends early, has the room to its right.
        room = (1 - fx) * w_pt / (LABEL_SIZE * CHAR_EM) - 1
        lines = wrapped(text, max(LABEL_CHARS, int(room))).split("\n")
        items.append(
            {
                "x": fx + 6 / w_pt,
                "y0": fy,
                "y": fy,
                "text": "\n".join(lines),
                "w": max(map(len, lines)) * LABEL_SIZE * CHAR_EM / w_pt,
                "h": len(lines) * LABEL_SIZE * 1.3 / h_pt,
                "colour": colour,
                "bold": bold,
                "xy": (x, y),
            }
        )
    # More labels than the panel's height holds (TensorFlow's many compiled variants end at the
    # same N): those of lines in the colour drop_first go first, those that stop short of the
    # panel's largest N before those that reach it, the longest first; their colour and the
    # figure's key still say what those lines are.
    lines = _lines_in_axes(ax, to_axes)
    furthest = max((line[:, 0].max() for line in lines), default=1.0)
    for i in items:
        i["last"] = i["x"] > furthest
    _thin(items, list(items), ROOM_FOR_LABELS, drop_first)
    # A label beside its line's end should not hide a line that goes on past that end
    # (TensorFlow's blocked strategies run on to 10^7, where the others' labels sit beside their
    # ends at 10^6): it keeps over such lines where its own line ends over them, else under.
    # Where labels then meet, those ending at the same N as the ones that meet all go under such
    # lines, else all over them, else they are free to hide them, as the first layout in which
    # no two labels meet has them.
    for k, i in enumerate(items):
        i["key"] = k
    natural = {i["key"]: _bounds(i, lines)[0] for i in items}
    laid = _layout([dict(i) for i in items], lines, natural, drop_first)
    crowded = {round(i["x"], 2) for i in _meeting(laid)}
    column = [k for k, i in enumerate(items) if round(i["x"], 2) in crowded and natural[k]]
    for side in ("under", "over", None):
        if not _meeting(laid) or not column:
            break
        laid = _layout(
            [dict(i) for i in items], lines, natural | dict.fromkeys(column, side), drop_first
        )
    for i in _step_aside(laid, w_pt):
        shifted = abs(i["y"] - i["y0"]) > i["h"] * 0.4
        ax.annotate(
            i["text"],
            xy=i["xy"],
            xytext=(i["x"], i["y"]),
            textcoords="axes fraction",
            va="center",
            ha="left",
            fontsize=LABEL_SIZE,
            color=i["colour"],
            fontweight="bold" if i["bold"] else "normal",
            annotation_clip=False,
            linespacing=1.0,
            arrowprops={
                "arrowstyle": "-",
                "color": i["colour"],
                "lw": 0.6,
                "alpha": 0.8,
                "shrinkA": 0,
                "shrinkB": 2,
            }
            if shifted
            else None,
            bbox={"boxstyle": "square,pad=0.05", "fc": "white", "ec": "none", "alpha": 0.75},
            zorder=6,
        )


def _lines_in_axes(ax, to_axes) -> list:
    """The panel's data lines as arrays of (x, y) in axes fractions (not the limit lines, which
    span the panel in axes coordinates)."""
    out = []
    for line in ax.get_lines():
        if line.get_transform() != ax.transData or len(line.get_xdata()) < 2:
            continue
        xy = to_axes.transform(np.column_stack([line.get_xdata(), line.get_ydata()]))
        xy = xy[np.isfinite(xy).all(axis=1)]
        if len(xy) > 1:
            out.append(xy[np.argsort(xy[:, 0])])
    return out


def _thin(items: list[dict], group: list[dict], room: float, drop_first: str | None) -> bool:
    """Drop labels of the group (from items too) in the colour drop_first until the group's
    heights add up to at most room; False where they cannot."""
    while sum(i["h"] for i in group) > room:
        droppable = [i for i in group if i["colour"] == drop_first]
        if not droppable:
            return False
        gone = max(droppable, key=lambda i: (not i["last"], i["h"], len(i["text"])))
        group.remove(gone)
        items.remove(gone)
    return True


def _bounds(item: dict, lines: list, side: str | None = None) -> tuple[str | None, float, float]:
    """The side ('over' or 'under') of the lines that go on past a label's line's end and
    beside the label, and the lowest and highest height its centre may take there: the side
    given, else over them if its line ends over them (None, and the panel's own limits, where
    no line goes on beside it). Over or under lines with no room left, lo ends above hi."""
    lo, hi, found = item["h"] / 2, 1 - item["h"] / 2, []
    x0, x1 = item["x"], item["x"] + item["w"]
    for line in lines:
        xs, ys = line[:, 0], line[:, 1]
        if xs.min() >= x0 or xs.max() <= x0:
            continue  # starts past the label's left edge, or ends before it
        inside = ys[(xs > x0) & (xs < x1)]
        span = np.concatenate([inside, np.interp([x0, min(x1, xs.max())], xs, ys)])
        found.append((float(np.interp(x0, xs, ys)), float(span.min()), float(span.max())))
    if not found:
        return None, lo, hi
    side = side or ("over" if item["y0"] >= max(at for at, _, _ in found) else "under")
    if side == "over":
        return side, max([lo] + [top + item["h"] / 2 for _, _, top in found]), hi
    return side, lo, min([hi] + [bottom - item["h"] / 2 for _, bottom, _ in found])


def _layout(items: list[dict], lines: list, sides: dict, drop_first: str | None) -> list[dict]:
    """The labels (thinned where a side cannot hold its own) at heights where they meet none
    other, if they can, each kept to its side of the lines that go on past it (sides: a label's
    key to 'over', 'under', or None: anywhere in the panel)."""
    for i in items:
        side = sides.get(i["key"])
        if side is None:
            i["side"], i["lo"], i["hi"] = None, i["h"] / 2, 1 - i["h"] / 2
        else:
            i["side"], i["lo"], i["hi"] = _bounds(i, lines, side)
    for side in ("over", "under"):
        group = [i for i in items if i["side"] == side]
        if group:
            top = max(i["hi"] + i["h"] / 2 for i in group)
            room = top - min(i["lo"] - i["h"] / 2 for i in group)
            _thin(items, group, ROOM_FOR_LABELS * room, drop_first)
    for i in items:
        i["y"] = min(max(i["y"], i["lo"]), i["hi"])
    for _ in range(300):  # relax: push overlapping pairs apart, keep within the bounds
        moved = False
        items.sort(key=lambda i: (i["y"], i["y0"]))  # ties (at a bound) keep their order
        for k, a in enumerate(items):
            for b in items[k + 1 :]:
                need = (a["h"] + b["h"]) / 2
                if _side_by_side(a, b) and b["y"] - a["y"] < need - 1e-9:
                    push = (need - (b["y"] - a["y"])) / 2
                    a["y"], b["y"] = a["y"] - push, b["y"] + push
                    moved = True
        for i in items:
            i["y"] = min(max(i["y"], i["lo"]), i["hi"])
        if not moved:
            break
    return items


def _step_aside(items: list[dict], w_pt: float) -> list[dict]:
    """The labels less those that would still run into a label further right (lines ending at
    different N, which the heights their bounds allow could not part), counted with the width a
    bold name takes rendered: the one further left goes, its line's colour and the figure's key
    still saying what it is."""
    wide = RENDERED_EM / CHAR_EM
    gone = set()
    for a in items:
        for b in items:
            meet = abs(a["y"] - b["y"]) < (a["h"] + b["h"]) / 2
            if a["x"] + 1e-6 < b["x"] < a["x"] + a["w"] * wide and meet:
                gone.add(id(a))
    return [i for i in items if id(i) not in gone]


def _side_by_side(a: dict, b: dict) -> bool:
    return a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]


def _meeting(items: list[dict]) -> list[dict]:
    """The labels whose boxes meet another's."""
    return [
        a
        for a in items
        for b in items
        if a is not b
        and _side_by_side(a, b)
        and abs(a["y"] - b["y"]) < (a["h"] + b["h"]) / 2 - 1e-6
    ]


def limit_text(limit: float, metric: str) -> str:
    """A timeout in seconds or a cap in MiB as a label says it: 900 s, 16 GiB."""
    if metric == "time":
        return f"{limit:g} s"
    return f"{limit / 1024:g} GiB" if limit >= 1024 else f"{limit:g} MiB"
