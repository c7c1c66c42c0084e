//! `log --graph`: the version graph drawn as `git log --graph` draws
//! commits — one row per version, newest first, a lane per line of work,
//! `|\` where a merge's second parent opens a lane and `|/` where two
//! lanes meet again at a common parent.

use std::collections::{BTreeMap, HashMap, HashSet};

/// One version to draw: its id, its parents, when it was written (orders
/// the rows) and its text.
#[derive(Debug, Clone)]
pub struct Row<I> {
    /// The version.
    pub id: I,
    /// Its parents (only those that are rows themselves are drawn).
    pub parents: Vec<I>,
    /// Sorts the rows: newer first among those ready.
    pub when: String,
    /// What the row says after its graph column.
    pub text: String,
}

/// The rows in the order they are drawn: every version after all of its
/// children, the newest first among the ready ones.
fn order<I: Clone + Eq + std::hash::Hash + Ord>(rows: Vec<Row<I>>) -> Vec<Row<I>> {
    let ids: HashSet<I> = rows.iter().map(|r| r.id.clone()).collect();
    let mut children: HashMap<I, usize> = HashMap::new();
    for r in &rows {
        for p in r.parents.iter().filter(|p| ids.contains(*p)) {
            *children.entry(p.clone()).or_default() += 1;
        }
    }
    let mut by_id: HashMap<I, Row<I>> = rows.into_iter().map(|r| (r.id.clone(), r)).collect();
    let mut ready: BTreeMap<(String, I), ()> = BTreeMap::new();
    for (id, r) in &by_id {
        if children.get(id).copied().unwrap_or(0) == 0 {
            ready.insert((r.when.clone(), id.clone()), ());
        }
    }
    let mut out = Vec::with_capacity(by_id.len());
    while let Some(((_, id), ())) = ready.pop_last() {
        let row = by_id.remove(&id).expect("each row once");
        for p in row.parents.iter().filter(|p| ids.contains(*p)) {
            let left = children.get_mut(p).expect("counted");
            *left -= 1;
            if *left == 0 {
                ready.insert((by_id[p].when.clone(), p.clone()), ());
            }
        }
        out.push(row);
    }
    out
}

/// The lanes as a line of `|` with `mark` at `at`.
fn lanes_line<I>(lanes: &[I], at: Option<usize>, mark: char) -> String {
    (0..lanes.len())
        .map(|i| if Some(i) == at { mark } else { '|' })
        .map(String::from)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Draw the rows: the graph's lines, newest first.
pub fn draw<I: Clone + Eq + std::hash::Hash + Ord>(rows: Vec<Row<I>>) -> Vec<String> {
    let ids: HashSet<I> = rows.iter().map(|r| r.id.clone()).collect();
    let mut lanes: Vec<I> = Vec::new();
    let mut out = Vec::new();
    for row in order(rows) {
        let at = match lanes.iter().position(|l| *l == row.id) {
            Some(at) => at,
            None => {
                lanes.push(row.id.clone());
                lanes.len() - 1
            }
        };
        // Lanes that waited for this version too meet it here.
        while let Some(other) = lanes
            .iter()
            .rposition(|l| *l == row.id)
            .filter(|o| *o != at)
        {
            let mut line = lanes_line(&lanes[..other], None, '|');
            line.push_str(if other == at + 1 { "/" } else { " /" });
            out.push(line);
            lanes.remove(other);
        }
        out.push(format!(
            "{}  {}",
            lanes_line(&lanes, Some(at), '*'),
            row.text
        ));
        let parents: Vec<I> = row
            .parents
            .iter()
            .filter(|p| ids.contains(*p))
            .cloned()
            .collect();
        match parents.split_first() {
            None => {
                lanes.remove(at);
                if at < lanes.len() {
                    out.push(format!("{}/", lanes_line(&lanes[..at], None, '|') + " "));
                }
            }
            Some((first, rest)) => {
                lanes[at] = first.clone();
                for (n, p) in rest.iter().enumerate() {
                    lanes.insert(at + 1 + n, p.clone());
                    let mut line = lanes_line(&lanes[..=at], None, '|');
                    line.push('\\');
                    out.push(line);
                }
            }
        }
    }
    out.into_iter()
        .map(|l| l.trim_end().replace("| /", "|/"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: u8, parents: &[u8], when: &str) -> Row<u8> {
        Row {
            id,
            parents: parents.to_vec(),
            when: when.into(),
            text: format!("v{id}"),
        }
    }

    #[test]
    fn a_chain_a_divergence_and_a_merge() {
        let rows = vec![
            row(1, &[], "1"),
            row(2, &[1], "2"),
            row(3, &[1], "3"),
            row(4, &[3, 2], "4"),
            row(5, &[4], "5"),
        ];
        let lines = draw(rows);
        assert_eq!(
            lines,
            vec!["*  v5", "*  v4", "|\\", "* |  v3", "| *  v2", "|/", "*  v1"],
            "{lines:#?}"
        );
    }

    #[test]
    fn two_heads_stay_two_lanes() {
        let lines = draw(vec![row(1, &[], "1"), row(2, &[1], "2"), row(3, &[1], "3")]);
        assert_eq!(lines, vec!["*  v3", "| *  v2", "|/", "*  v1"], "{lines:#?}");
    }
}
