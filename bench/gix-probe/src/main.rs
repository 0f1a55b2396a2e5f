//! Throwaway probe (not part of gavel's build): what gavel's filing commit costs through gix, for the
//! issue-33 measurement against `git add` + `git commit`. Usage:
//!   gixprobe read REPO PATH...    head id + which PATHs the index tracks
//!   gixprobe commit REPO DIR      blobs for DIR's files, tree edit, commit on HEAD (index NOT updated)
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let repo = gix::open(&args[2]).expect("open");
    match args[1].as_str() {
        "read" => {
            let head = repo.head_id().expect("head");
            let index = repo.index_or_empty().expect("index");
            let mut n = 0;
            for p in &args[3..] {
                if index.entry_by_path(p.as_str().into()).is_some() {
                    n += 1;
                }
            }
            println!("{head} {n}");
        }
        "commit" => {
            let root = Path::new(&args[2]);
            let dir = &args[3];
            let head = repo.head_commit().expect("head commit");
            let tree = head.tree_id().expect("tree");
            let mut editor = repo.edit_tree(tree).expect("editor");
            let mut stack = vec![root.join(dir)];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).expect("read_dir") {
                    let e = e.expect("entry");
                    let p = e.path();
                    if e.file_type().expect("ft").is_dir() {
                        stack.push(p);
                    } else {
                        let bytes = std::fs::read(&p).expect("read");
                        let id = repo.write_blob(&bytes).expect("blob");
                        let rel = p.strip_prefix(root).expect("rel").to_string_lossy().into_owned();
                        editor
                            .upsert(rel.as_str(), gix::object::tree::EntryKind::Blob, id)
                            .expect("upsert");
                    }
                }
            }
            let new_tree = editor.write().expect("write tree");
            let id = repo
                .commit("HEAD", "probe", new_tree, [head.id])
                .expect("commit");
            println!("{id}");
        }
        _ => panic!("read|commit"),
    }
}
