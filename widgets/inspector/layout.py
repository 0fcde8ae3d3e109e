"""Where each node goes: a layered left-to-right drawing of a DAG, computed in Python.

1. *Layers* (columns): an op sits one column right of its furthest input (longest path), and a
   leaf sits just left of its first consumer, so inputs stand next to the op that reads them.
2. *Order* within a column: a few sweeps that move each node to the mean position
   (barycentre) of its neighbours in the column before, then after; this removes most edge
   crossings (Sugiyama's method, without Graphviz).

Every tie is broken by the nodes' given order, so the same graph is drawn the same way each run.
"""


def layered_layout(nodes, edges, sweeps=4):
    """``{node: (column, row)}`` for ``nodes`` (topologically ordered) and ``(source, target)``
    pairs; rows are centred on 0 so every column is balanced around the middle."""
    index = {n: i for i, n in enumerate(nodes)}
    inputs = {n: [] for n in nodes}
    outputs = {n: [] for n in nodes}
    for source, target in edges:
        inputs[target].append(source)
        outputs[source].append(target)

    column = {}
    for n in nodes:
        column[n] = 1 + max((column.get(i, -1) for i in inputs[n]), default=-1)
    for n in reversed(nodes):           # leaves move right, next to their first consumer
        if not inputs[n] and outputs[n]:
            column[n] = min(column[o] for o in outputs[n]) - 1

    columns = {}
    for n in nodes:
        columns.setdefault(column[n], []).append(n)
    order = [columns[c] for c in sorted(columns)]
    row = {}                            # position in the column, centred on 0

    def place(col):
        for r, n in enumerate(col):
            row[n] = r - (len(col) - 1) / 2

    def sweep(cols, neighbours):
        for col in cols:
            def barycentre(n):
                near = [row[m] for m in neighbours[n]]
                return (sum(near) / len(near) if near else row[n], index[n])
            col.sort(key=barycentre)
            place(col)

    for col in order:
        place(col)
    for _ in range(sweeps):
        sweep(order[1:], inputs)
        sweep(order[-2::-1], outputs)

    first = min(columns) if columns else 0
    return {n: (column[n] - first, row[n]) for n in nodes}
