"""Where each box and each wire label goes: a layered left-to-right drawing, in pixels.

The engine is Sugiyama's method, as Graphviz's dot and dagre (TensorBoard's graph) use it,
written here in Python so that a picture is the same on every run and tests can check it:

1. *Columns*: a box sits one column right of its furthest input (longest path); an input
   with no inputs of its own sits just left of its first consumer.
2. *Wires through columns*: a wire's label (its value above, its gradient below) gets a slot
   in the column just left of its target, like a small box; a wire that jumps over columns
   gets a thin bend point in each column it crosses, so no wire cuts through a box.
3. *Order* within a column: sweeps that move each slot to the mean position (barycentre) of
   its neighbours in the column before, then after; the order with the fewest crossings is
   kept. Boxes of band 1 (gradient nodes) come after those of band 0 in every column.
4. *Positions*: in each column, every slot is placed as close as possible to its neighbours
   while keeping its whole height clear of the next one: a least-squares problem with "at
   least this far apart" constraints, solved exactly by pooling adjacent violators. Band 1 is
   placed below everything of band 0: gradient subgraphs are put aside.

Columns are as wide as their widest box or label, so no two boxes or labels overlap; ties are
broken by the given order, so the same graph is drawn the same way each run.

Why not an engine made for this (issue 26 weighed them): dagre (TensorBoard's) and Graphviz's
dot as WebAssembly (``@hpcc-js/wasm-graphviz``) lay out in the browser, so Python would not know
where anything is: no test could check the label boxes, the figure could not be sized to scroll,
and the widget would ship a JavaScript bundle. grandalf is Sugiyama in pure Python with node
sizes, but it has no edge labels (a wire's value and gradient are the largest words here: dot
makes them slots of their own, as step 2 does) and is no longer maintained. The method itself is
short; written here with label slots, it is deterministic, label-aware and checked by tests.
"""
from dataclasses import dataclass

BOX_GAP = 16        # px between two slots of a column that hold boxes or labels
BEND_GAP = 6        # px kept clear around a wire's bend point
COLUMN_GAP = 14     # px between columns
EMPTY_COLUMN = 28   # px: a column of bend points only
BAND_GAP = 40       # px between the forward graph and the gradient subgraph below it
MARGIN = 12         # px around the picture
PORT = 10           # px a wire runs level beyond a box before it bends
ENTRY_GAP = 10      # px between the wires entering one box ...
ENTRY_SPREAD = 12   # ... all within this far of its centre
SWEEPS = 8
SETTLED = 0.1       # px: positions that moved less than this in a sweep are final


@dataclass
class Route:
    """Where a wire goes: ``points`` from its source's centre to its target's centre (through
    its label and bend points), ``label`` the centre of its label (None: no label)."""

    points: list
    label: tuple = None


@dataclass
class Placement:
    boxes: dict         # box id → (x, y) of its centre
    routes: list        # one Route per link, in the order given
    width: float
    height: float


def layered_layout(boxes, links, order_links=(), bands=None, sweeps=SWEEPS):
    """Place ``boxes`` (``{id: (width, height)}``, topologically ordered) and route ``links``
    (``[(source, target, label)]``: a label is None, ``(width, height)`` or ``(width, height,
    how far below its centre the wire passes)``; a target None is a wire leaving the picture
    to the right, as the output's). ``order_links`` are ``(source, target)`` pairs that are not
    drawn but keep their order; ``bands`` maps a box to 1 to put it aside, below."""
    bands = bands or {}
    ends = {f"end:{i}": (0, 0) for i, (_, target, _) in enumerate(links) if target is None}
    sizes = {**boxes, **ends}
    pairs = [(s, t if t is not None else f"end:{i}", size)
             for i, (s, t, size) in enumerate(links)]
    rank = _ranks(list(sizes), [(s, t) for s, t, _ in pairs] + list(order_links))

    slots, chains = _slots(sizes, pairs, rank, bands)
    columns = _order(slots, chains, sweeps)
    height_of = {key: slot.height for key, slot in slots.items()}
    y = _positions(columns, chains, height_of, slots, sweeps)
    x, width = _columns_x(columns, slots)
    top = min((y[k] - height_of[k] / 2 for k in y), default=0.0)
    shift = MARGIN - top
    centre = {k: (x[slots[k].column], y[k] + shift) for k in y}
    entry = _entries(chains, centre)
    routes = []
    for i, chain in enumerate(chains):
        points = []
        for key in chain:
            cx, cy = centre[key]
            half = slots[key].width / 2
            if slots[key].kind == "label":     # level through the label, between its lines
                level = cy + slots[key].wire
                points += [(cx - half, level), (cx + half, level)]
            elif key == chain[0]:              # leave a box level with its centre, and
                points += [(cx, cy), (cx + half + PORT, cy)]    # enter one level too:
            elif key == chain[-1] and half:    # no wire crosses the words above and below
                points += [(cx - half - PORT, cy + entry[i]), (cx, cy + entry[i])]
            else:
                points.append((cx, cy))
        routes.append(Route(points, centre.get(("label", i))))
    bottom = max((centre[k][1] + height_of[k] / 2 for k in centre), default=0.0)
    return Placement({b: centre[("box", b)] for b in boxes}, routes, width, bottom + MARGIN)


def _entries(chains, centre):
    """How far above or below its target's centre each wire enters: the wires into one box
    side by side, in the order they arrive (their arrowheads apart)."""
    arriving = {}
    for i, chain in enumerate(chains):
        arriving.setdefault(chain[-1], []).append((centre[chain[-2]][1], i))
    entry = {}
    for wires in arriving.values():
        wires.sort()
        step = min(ENTRY_GAP, 2 * ENTRY_SPREAD / max(1, len(wires) - 1))
        for k, (_, i) in enumerate(wires):
            entry[i] = (k - (len(wires) - 1) / 2) * step
    return entry


@dataclass
class _Slot:
    kind: str           # "box", "label" or "bend"
    column: int         # 2·rank for boxes; labels and bends sit in the odd columns between
    width: float
    height: float
    band: int
    seq: int            # creation order: ties are broken by it
    wire: float = 0.0   # a label: how far below its centre the wire passes


def _ranks(keys, pairs):
    """Column of each box: longest path from the inputs; an input without inputs of its own
    moves right, next to its first consumer."""
    inputs = {k: [] for k in keys}
    outputs = {k: [] for k in keys}
    for s, t in pairs:
        inputs[t].append(s)
        outputs[s].append(t)
    rank = {}
    for k in keys:
        rank[k] = 1 + max((rank.get(i, -1) for i in inputs[k]), default=-1)
    for k in reversed(keys):
        if not inputs[k] and outputs[k]:
            rank[k] = min(rank[o] for o in outputs[k]) - 1
    first = min(rank.values(), default=0)
    return {k: r - first for k, r in rank.items()}


def _slots(sizes, pairs, rank, bands):
    """A slot per box, per wire label and per bend point; each wire as its chain of slots."""
    slots, chains = {}, []
    for box, (width, height) in sizes.items():
        slots[("box", box)] = _Slot("box", 2 * rank[box], width, height, bands.get(box, 0),
                                    len(slots))
    for i, (source, target, size) in enumerate(pairs):
        band = max(bands.get(source, 0), bands.get(target, 0))
        first, last = 2 * rank[source] + 1, 2 * rank[target] - 1
        chain = [("box", source)]
        for column in range(first, last + 1):
            if column == last and size is not None:
                slots[("label", i)] = _Slot("label", column, size[0], size[1], band,
                                            len(slots), *size[2:])
                chain.append(("label", i))
            else:
                slots[("bend", i, column)] = _Slot("bend", column, 0, 0, band, len(slots))
                chain.append(("bend", i, column))
        chains.append(chain + [("box", target)])
    return slots, chains


def _neighbours(chains):
    left, right = {}, {}
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            right.setdefault(a, []).append(b)
            left.setdefault(b, []).append(a)
    return left, right


def _order(slots, chains, sweeps):
    """The slots of each column, top to bottom, after barycentre sweeps."""
    by_column = {}
    for key, slot in sorted(slots.items(), key=lambda item: item[1].seq):
        by_column.setdefault(slot.column, []).append(key)
    columns = [by_column.get(c, []) for c in range(max(by_column, default=-1) + 1)]
    left, right = _neighbours(chains)
    where = {}

    def number(column):
        for i, key in enumerate(column):
            where[key] = i - (len(column) - 1) / 2

    def sweep(cols, near):
        for column in cols:
            def key(k):
                seen = [where[m] for m in near.get(k, ())]
                return slots[k].band, sum(seen) / len(seen) if seen else where[k]
            column.sort(key=key)            # (stable: a tie keeps its place)
            number(column)

    for column in columns:
        column.sort(key=lambda k: (slots[k].band, slots[k].seq))
        number(column)
    best = (crossings(columns, right), [list(c) for c in columns])
    for _ in range(sweeps):                 # keep the order with the fewest crossings
        sweep(columns[1:], left)
        sweep(columns[-2::-1], right)
        count = crossings(columns, right)
        if count < best[0]:
            best = (count, [list(c) for c in columns])
        if best[0] == 0:                    # (nothing left to improve)
            break
    return best[1]


def crossings(columns, right):
    """How many pairs of wire segments cross between neighbouring columns."""
    total = 0
    for column, following in zip(columns, columns[1:]):
        at = {k: i for i, k in enumerate(following)}
        ends = [at[m] for k in column for m in sorted(right.get(k, ()), key=at.get)
                if m in at]
        total += _inversions(ends)
    return total


def _inversions(values):
    """Pairs i < j with values[i] > values[j] (merge sort)."""
    if len(values) < 2:
        return 0
    middle = len(values) // 2
    low, high = sorted(values[:middle]), sorted(values[middle:])
    count = _inversions(values[:middle]) + _inversions(values[middle:])
    j = 0
    for x in low:                       # for each of the first half, the smaller ones after
        while j < len(high) and high[j] < x:
            j += 1
        count += j
    return count


def _positions(columns, chains, height_of, slots, sweeps):
    """y of every slot's centre: band 0 first, then band 1 below all of it."""
    left, right = _neighbours(chains)
    y = {}
    lower = None
    for band in (0, 1):
        lists = [[k for k in column if slots[k].band == band] for column in columns]
        for column in lists:                    # start stacked from 0
            _place(column, [0.0] * len(column), height_of, y, lower)
        for _ in range(sweeps):
            before = dict(y)
            for column in lists[1:]:
                _place(column, _wanted(column, left, y), height_of, y, lower)
            for column in lists[-2::-1]:
                _place(column, _wanted(column, right, y), height_of, y, lower)
            if all(abs(y[k] - before[k]) < SETTLED for k in before):
                break                       # (a sweep more would move nothing visibly)
        for column in lists:
            _place(column, _wanted(column, {k: left.get(k, []) + right.get(k, [])
                                            for k in column}, y), height_of, y, lower)
        placed = [y[k] + height_of[k] / 2 for column in lists for k in column]
        if placed:
            lower = max(placed) + BAND_GAP
    return y


def _wanted(column, near, y):
    """Where each slot would like to be: the mean y of its placed neighbours."""
    wanted = []
    for k in column:
        seen = [y[m] for m in near.get(k, ()) if m in y]
        wanted.append(sum(seen) / len(seen) if seen else y.get(k, 0.0))
    return wanted


def _place(column, wanted, height_of, y, lower):
    """Put the slots of ``column`` (top to bottom) as near ``wanted`` as they can be while
    each stays clear of the next (and, with ``lower``, below it)."""
    if not column:
        return
    gaps = [(height_of[a] + height_of[b]) / 2 +
            (BOX_GAP if height_of[a] and height_of[b] else BEND_GAP)
            for a, b in zip(column, column[1:])]
    first = None if lower is None else lower + height_of[column[0]] / 2
    for key, position in zip(column, spread(wanted, gaps, first)):
        y[key] = position


def spread(wanted, gaps, lower=None):
    """Positions p₀ ≤ p₁ ≤ … with p[i+1] − p[i] ≥ gaps[i] (and p₀ ≥ ``lower``) that minimise
    Σ (p[i] − wanted[i])².

    With offsets c[i] = gaps[0] + … + gaps[i-1] and z[i] = p[i] − c[i], the constraints say
    only that z never decreases: isotonic regression of wanted[i] − c[i], which pooling
    adjacent violators solves exactly (merge neighbours that are out of order into their mean).
    """
    offsets = [0.0]
    for gap in gaps:
        offsets.append(offsets[-1] + gap)
    blocks = []                         # [mean, count], increasing means
    for w, c in zip(wanted, offsets):
        blocks.append([w - c, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, count = blocks.pop()
            previous = blocks[-1]
            previous[0] = (previous[0] * previous[1] + mean * count) / (previous[1] + count)
            previous[1] += count
    z = [mean for mean, count in blocks for _ in range(count)]
    if lower is not None:
        z = [max(value, lower) for value in z]
    return [value + c for value, c in zip(z, offsets)]


def _columns_x(columns, slots):
    """The x of each column's centre, columns as wide as their widest slot; total width."""
    x, left = {}, MARGIN
    for c, column in enumerate(columns):
        widest = max((slots[k].width for k in column), default=0.0)
        width = widest if widest else EMPTY_COLUMN
        x[c] = left + width / 2
        left += width + COLUMN_GAP
    return x, left - COLUMN_GAP + MARGIN
