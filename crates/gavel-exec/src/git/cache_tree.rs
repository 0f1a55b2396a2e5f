//! git's cache tree (the index's `TREE` extension): the tree ids of the index's folders, kept
//! so a commit need not hash every folder again. A folder whose content changed must be marked
//! unknown (`-1` entries, no id) up to the root, or git would commit the old tree; this is what
//! [`invalidate`] does for the paths [`super::stage`] adds. A valid root that is `HEAD`'s tree
//! says nothing else is staged ([`is_head`]). The objects written ahead of a commit take the
//! ids of the folders it leaves alone from here ([`folders`]) instead of building them.

/// Whether the index whose extensions are `extensions` holds exactly `HEAD`'s tree: its cache
/// tree's root is valid and is that tree, and no merge, cherry-pick, revert or rebase is in
/// progress (`--include` would conclude it).
pub(super) fn is_head(git_dir: &std::path::Path, extensions: &[([u8; 4], &[u8])]) -> bool {
    let in_progress = [
        "MERGE_HEAD",
        "CHERRY_PICK_HEAD",
        "REVERT_HEAD",
        "rebase-merge",
        "rebase-apply",
    ]
    .iter()
    .any(|f| git_dir.join(f).exists());
    !in_progress
        && extensions.iter().any(|(sig, data)| {
            sig == b"TREE"
                && root(data).is_some_and(|tree| {
                    super::objects::head_id(git_dir)
                        .and_then(|head| super::objects::commit_tree(git_dir, &head))
                        .is_some_and(|head_tree| head_tree == tree)
                })
        })
}

/// One folder of the cache tree.
pub(super) struct Node {
    name: Vec<u8>,
    /// `None`: invalid (an entry count of -1, no id).
    valid: Option<(u64, [u8; 20])>,
    children: Vec<Node>,
}

/// The `TREE` extension `data` with the folders holding any of `paths` (and the root) marked
/// unknown; `None` when it cannot be read.
pub(crate) fn invalidate(data: &[u8], paths: &[&[u8]]) -> Option<Vec<u8>> {
    if data.is_empty() {
        return Some(Vec::new());
    }
    let mut at = 0;
    let mut root = read(data, &mut at)?;
    if at != data.len() {
        return None;
    }
    for path in paths {
        let mut node = &mut root;
        node.valid = None;
        let mut parts: Vec<&[u8]> = path.split(|b| *b == b'/').collect();
        parts.pop(); // the file's own name
        for part in parts {
            match node.children.iter_mut().position(|c| c.name == part) {
                Some(i) => {
                    node = &mut node.children[i];
                    node.valid = None;
                }
                None => break,
            }
        }
    }
    let mut out = Vec::with_capacity(data.len());
    write(&root, &mut out);
    Some(out)
}

/// The cache tree `data` (a `TREE` extension) as folders; `None` when it cannot be read.
pub(super) fn folders(data: &[u8]) -> Option<Node> {
    let mut at = 0;
    let root = read(data, &mut at)?;
    (at == data.len()).then_some(root)
}

impl Node {
    /// The subfolder `name` (one path component), if the cache tree has it.
    pub(super) fn child(&self, name: &[u8]) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }

    /// The folder's tree id, when git knows it and it covers exactly `entries` index entries.
    pub(super) fn id_covering(&self, entries: usize) -> Option<[u8; 20]> {
        self.valid
            .filter(|(count, _)| usize::try_from(*count).ok() == Some(entries))
            .map(|(_, id)| id)
    }
}

/// The root tree's id (hex) when the cache tree knows it (the root entry is valid).
pub(crate) fn root(data: &[u8]) -> Option<String> {
    let mut at = 0;
    let root = read(data, &mut at)?;
    let (_, id) = root.valid?;
    Some(id.iter().map(|b| format!("{b:02x}")).collect())
}

fn read(data: &[u8], at: &mut usize) -> Option<Node> {
    let nul = data.get(*at..)?.iter().position(|b| *b == 0)?;
    let name = data[*at..*at + nul].to_vec();
    *at += nul + 1;
    let nl = data.get(*at..)?.iter().position(|b| *b == b'\n')?;
    let line = std::str::from_utf8(&data[*at..*at + nl]).ok()?;
    *at += nl + 1;
    let (count, subtrees) = line.split_once(' ')?;
    let count: i64 = count.parse().ok()?;
    let subtrees: usize = subtrees.parse().ok()?;
    let valid = if count >= 0 {
        let id: [u8; 20] = data.get(*at..*at + 20)?.try_into().ok()?;
        *at += 20;
        Some((u64::try_from(count).ok()?, id))
    } else {
        None
    };
    let mut children = Vec::with_capacity(subtrees);
    for _ in 0..subtrees {
        children.push(read(data, at)?);
    }
    Some(Node {
        name,
        valid,
        children,
    })
}

fn write(node: &Node, out: &mut Vec<u8>) {
    out.extend_from_slice(&node.name);
    out.push(0);
    let count = node
        .valid
        .map_or_else(|| "-1".to_owned(), |(n, _)| n.to_string());
    out.extend_from_slice(format!("{count} {}\n", node.children.len()).as_bytes());
    if let Some((_, id)) = &node.valid {
        out.extend_from_slice(id);
    }
    for child in &node.children {
        write(child, out);
    }
}
