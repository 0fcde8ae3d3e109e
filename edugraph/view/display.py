"""What stands on screen: a box per node, per collapsed name scope, per part of a big graph,
and the links between the boxes.

A collapsed scope's box stands for every node inside it, and the edges into and out of those
nodes become links to the box. A graph too big to read as one picture is *summarised*
(``view.summarise(limit)``): its top-level name scopes are collapsed and, if that still leaves
more than ``limit`` boxes, runs of boxes in the order of the walk are gathered into parts (parts
of parts for a very long graph), each opened on its own (``view.open_part``). The text table
(``print(view)``) follows the collapsed scopes, never the parts.
"""
import heapq
import math

PART_BRANCHING = 40     # at most about this many boxes in a summary, or inside an opened part


class Shown:
    """The boxes for the view's display choices, in topological order, and their links.

    ``owner``: node id → the id of the box standing for it (hidden nodes are absent);
    ``members``: box id → node ids; ``links``: ``[(source box, target box, edges)]``, one per
    pair; ``control_links``: "runs after" pairs; ``hidden_links``: pairs joined only through
    hidden nodes (not drawn: they keep an optimizer's update right of the loss it reads);
    ``scopes``: the name scopes a student can collapse or open from here.
    """

    def __init__(self, view):
        owner = view.visible_nodes()
        for node_id in owner:
            closed = next((p for p in view.parts.get(node_id, ())
                           if p not in view.opened_parts), None)
            if closed is not None:
                owner[node_id] = closed
        self.owner = owner
        self.members = {}
        for node_id, box in owner.items():
            self.members.setdefault(box, []).append(node_id)
        self.links = _linked(owner, view.edges)
        value_pairs = {(s, t) for s, t, _ in self.links}
        self.control_links = [(s, t) for s, t, _ in _linked(owner, view.control_edges)
                              if (s, t) not in value_pairs]
        pairs = list(value_pairs) + self.control_links
        self.hidden_links = [p for p in _through_hidden(view, owner) if p not in set(pairs)]
        self.order = _topological(list(self.members), [(s, t) for s, t, _ in self.links] +
                                  self.control_links + self.hidden_links)
        self.scopes = _offered_scopes(view, self.order)

    @staticmethod
    def is_group(box):
        return box.startswith(("scope:", "part:"))


def _offered_scopes(view, order):
    """The scopes with a node on screen, and the collapsed ones; in a summary, only the
    scopes of the boxes on screen (a list of thousands is no help)."""
    if not view.part_labels:
        return sorted(set(view.scopes(shown_only=True)) | view.collapsed)
    found = set()
    for box in order:
        if box.startswith("scope:"):
            found.add(box[6:])
        elif not box.startswith("part:") and view.node(box).scope:
            parts = view.node(box).scope.split("/")
            found.update("/".join(parts[:i + 1]) for i in range(len(parts)))
    return sorted(found)


def summary_parts(view, limit):
    """``{node id: (part ids, outermost first)}`` and ``{part id: its label}`` gathering the
    boxes now shown into parts, when there are more than ``limit`` of them."""
    owner = view.visible_nodes()
    items = list(dict.fromkeys(owner[n.id] for n in view.nodes if n.id in owner))
    if len(items) <= limit:
        return {}, {}
    levels = max(2, math.ceil(math.log(len(items)) / math.log(PART_BRANCHING)))
    size = math.ceil(len(items) ** (1 / levels))      # items per part, parts per part
    chains = {item: () for item in items}
    labels = {}
    for level in range(levels - 1, 0, -1):
        span = size ** level
        for first in range(0, len(items), span):
            run = items[first:first + span]
            part = f"part:{first}-{first + len(run) - 1}"
            labels[part] = f"{_item_name(view, run[0])} … {_item_name(view, run[-1])}"
            for item in run:
                chains[item] += (part,)
    return {n.id: chains[owner[n.id]] for n in view.nodes if n.id in owner}, labels


def _item_name(view, item):
    return item.split(":", 1)[1] if item.startswith("scope:") else view.node(item).label


def _linked(owner, edges):
    """Edges between what is shown: [(source box, target box, edges)], one link per pair."""
    links = {}
    for e in edges:
        source, target = owner.get(e.source), owner.get(e.target)
        if source is not None and target is not None and source != target:
            links.setdefault((source, target), []).append(e)
    return [(s, t, grouped) for (s, t), grouped in links.items()]


def _through_hidden(view, owner):
    """Pairs of shown boxes joined only through hidden (gradient) nodes."""
    reach, pairs = {}, {}           # hidden node → shown boxes it is computed from
    for n in view.nodes:
        target = owner.get(n.id)
        sources = {}
        for i in n.inputs:
            if i in owner:
                sources[owner[i]] = None
            else:
                sources.update(reach.get(i, {}))
                if target is not None:
                    pairs.update(((s, target), None) for s in reach.get(i, {}) if s != target)
        if target is None:
            reach[n.id] = sources
    return list(pairs)


def _topological(keys, links):
    """``keys`` reordered so that every link goes forward (Kahn's algorithm; ties keep the
    given order). Collapsing a scope can break the graph's own order; a cycle through a
    collapsed scope keeps the given order for the boxes on it."""
    waiting = {k: 0 for k in keys}
    after = {k: [] for k in keys}
    for source, target in links:
        waiting[target] += 1
        after[source].append(target)
    rank = {k: i for i, k in enumerate(keys)}
    ready = [(rank[k], k) for k in keys if waiting[k] == 0]
    order = []
    while ready:
        _, k = heapq.heappop(ready)
        order.append(k)
        for t in after[k]:
            waiting[t] -= 1
            if waiting[t] == 0:
                heapq.heappush(ready, (rank[t], t))
    placed = set(order)
    return order + [k for k in keys if k not in placed]
