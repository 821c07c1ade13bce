"""Labels at the ends of a figure's lines: each beside its line's end, moved apart where
they would overlap, wrapped at hyphens where a long name would leave the panel, and thinned where
a panel cannot hold them all; and the words on a failure line ("timeout 300 s")."""

from __future__ import annotations

LABEL_SIZE = 10.5
LABEL_CHARS = 13  # longer names wrap at their hyphens, where they end at the right edge
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
    overlap (with a thin leader back to the end); labels past the right edge are kept."""
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
        room = (1 - fx) * w_pt / (LABEL_SIZE * 0.6) - 1
        lines = wrapped(text, max(LABEL_CHARS, int(room))).split("\n")
        items.append({"x": fx + 6 / w_pt, "y0": fy, "y": fy, "text": "\n".join(lines),
                      "w": max(map(len, lines)) * LABEL_SIZE * 0.6 / w_pt,
                      "h": len(lines) * LABEL_SIZE * 1.3 / h_pt,
                      "colour": colour, "bold": bold, "xy": (x, y)})  # fmt: skip
    # More labels than the panel's height holds (TensorFlow's many compiled variants end at the
    # same N): those of lines in the colour drop_first go first, the longest first; their colour
    # and the figure's key still say what those lines are.
    while sum(i["h"] for i in items) > ROOM_FOR_LABELS:
        droppable = [i for i in items if i["colour"] == drop_first]
        if not droppable:
            break
        items.remove(max(droppable, key=lambda i: (i["h"], len(i["text"]))))
    for _ in range(300):  # relax: push overlapping pairs apart, keep inside the axes
        moved = False
        items.sort(key=lambda i: i["y"])
        for k, a in enumerate(items):
            for b in items[k + 1 :]:
                need = (a["h"] + b["h"]) / 2
                beside = a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]
                if beside and b["y"] - a["y"] < need - 1e-9:
                    push = (need - (b["y"] - a["y"])) / 2
                    a["y"], b["y"] = a["y"] - push, b["y"] + push
                    moved = True
        for i in items:
            i["y"] = min(max(i["y"], i["h"] / 2), 1 - i["h"] / 2)
        if not moved:
            break
    for i in items:
        shifted = abs(i["y"] - i["y0"]) > i["h"] * 0.4
        ax.annotate(i["text"], xy=i["xy"], xytext=(i["x"], i["y"]), textcoords="axes fraction",
                    va="center", ha="left", fontsize=LABEL_SIZE, color=i["colour"],
                    fontweight="bold" if i["bold"] else "normal", annotation_clip=False,
                    linespacing=1.0,
                    arrowprops={"arrowstyle": "-", "color": i["colour"], "lw": 0.6,
                                "alpha": 0.8, "shrinkA": 0, "shrinkB": 2} if shifted else None,
                    bbox={"boxstyle": "square,pad=0.05", "fc": "white", "ec": "none",
                          "alpha": 0.75}, zorder=6)  # fmt: skip


def limit_text(limit: float, metric: str) -> str:
    """A timeout in seconds or a cap in MiB as a label says it: 900 s, 16 GiB."""
    if metric == "time":
        return f"{limit:g} s"
    return f"{limit / 1024:g} GiB" if limit >= 1024 else f"{limit:g} MiB"
