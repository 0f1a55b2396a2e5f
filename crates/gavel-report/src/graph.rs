//! A run's path through its workflow graph, drawn as SVG: its nodes top to bottom in the order
//! they were first reached, each edge it took with how often, forward edges on the right and
//! loops back on the left. Coordinates only; the template draws them and the stylesheet colours
//! them (no script, no inline style).

use crate::view::Edge;

/// A node box.
#[derive(Debug, Clone)]
pub struct GraphNode {
    pub label: String,
    pub visits: usize,
    pub x: u32,
    pub y: u32,
}

/// An edge: an SVG path and where its count goes.
#[derive(Debug, Clone)]
pub struct GraphEdge {
    pub d: String,
    pub label: String,
    pub lx: u32,
    pub ly: u32,
    /// A loop back to an earlier node.
    pub back: bool,
}

/// The drawing.
#[derive(Debug, Clone)]
pub struct Graph {
    pub width: u32,
    pub height: u32,
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
}

const BOX_W: u32 = 200;
const BOX_H: u32 = 28;
const STEP: u32 = 52;
const SPREAD: u32 = 26;

/// Lays out the nodes of `path` and the `edges` between them.
pub fn layout(path: &[String], edges: &[Edge]) -> Graph {
    let mut order: Vec<String> = Vec::new();
    for name in path
        .iter()
        .chain(edges.iter().flat_map(|e| [&e.from, &e.to]))
    {
        if !order.contains(name) {
            order.push(name.clone());
        }
    }
    let index = |name: &str| order.iter().position(|n| n == name).unwrap_or(0);
    // Room on each side for the widest curve: loops back on the left, skips on the right.
    let span = |back: bool| {
        edges
            .iter()
            .map(|e| (index(&e.from), index(&e.to)))
            .filter(|(f, t)| if back { t <= f } else { *t > f + 1 })
            .map(|(f, t)| reach(f, t))
            .max()
            .unwrap_or(0)
    };
    let (back_span, skip_span) = (span(true), span(false));
    let left = 30 + SPREAD * back_span;
    let y_of = |i: usize| 10 + u32::try_from(i).unwrap_or(0) * STEP;
    let nodes = order
        .iter()
        .enumerate()
        .map(|(i, label)| GraphNode {
            label: label.clone(),
            visits: path.iter().filter(|p| *p == label).count(),
            x: left,
            y: y_of(i),
        })
        .collect();
    let mid = BOX_H / 2;
    let edges = edges
        .iter()
        .map(|e| {
            let (from, to) = (index(&e.from), index(&e.to));
            let (y1, y2) = (y_of(from), y_of(to));
            let label = format!("×{}", e.count);
            if to == from + 1 {
                let x = left + BOX_W / 2;
                GraphEdge {
                    d: format!("M{x},{} L{x},{}", y1 + BOX_H, y2 - 2),
                    label,
                    lx: x + 6,
                    ly: (y1 + BOX_H + y2) / 2 + 4,
                    back: false,
                }
            } else {
                // A curve out to the side: skips on the right, loops back on the left.
                let back = to <= from;
                let (x, bend, end) = if back {
                    let bend = left.saturating_sub(SPREAD * reach(from, to));
                    (left, bend, left - 2)
                } else {
                    let x = left + BOX_W;
                    (x, x + SPREAD * reach(from, to), x + 2)
                };
                let (a, b) = (y1 + mid, y2 + mid);
                GraphEdge {
                    d: format!("M{x},{a} C{bend},{a} {bend},{b} {end},{b}"),
                    label,
                    lx: if back {
                        bend.saturating_sub(4).max(2)
                    } else {
                        bend - 10
                    },
                    ly: (y1 + y2) / 2 + mid,
                    back,
                }
            }
        })
        .collect();
    Graph {
        width: left + BOX_W + 30 + SPREAD * skip_span,
        height: y_of(order.len()) + 4,
        nodes,
        edges,
    }
}

/// How far a curve between rows `from` and `to` bends out, in steps: one per row it spans (a
/// loop back counts its own row), at most 12.
fn reach(from: usize, to: usize) -> u32 {
    let back = to <= from;
    u32::try_from(from.abs_diff(to) + usize::from(back))
        .unwrap_or(12)
        .min(12)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(from: &str, to: &str, count: usize) -> Edge {
        Edge {
            from: from.into(),
            to: to.into(),
            count,
        }
    }

    #[test]
    fn nodes_in_first_visit_order_loops_on_the_left() {
        let path: Vec<String> = ["A", "B", "C", "B", "C", "D"].map(String::from).to_vec();
        let g = layout(
            &path,
            &[
                edge("A", "B", 1),
                edge("B", "C", 2),
                edge("C", "B", 1),
                edge("C", "D", 1),
                edge("D", "end", 1),
            ],
        );
        let labels: Vec<&str> = g.nodes.iter().map(|n| n.label.as_str()).collect();
        assert_eq!(labels, ["A", "B", "C", "D", "end"]);
        assert_eq!(g.nodes[1].visits, 2);
        let back: Vec<bool> = g.edges.iter().map(|e| e.back).collect();
        assert_eq!(back, [false, false, true, false, false]);
        assert_eq!(g.edges[1].label, "×2");
        assert!(
            g.nodes
                .iter()
                .all(|n| n.y + BOX_H <= g.height && n.x + BOX_W <= g.width)
        );
    }
}
