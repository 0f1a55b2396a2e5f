//! tasks.md: front matter or folder id, layers, unclassified tasks, and exact check-offs.

use super::*;

const TASKS: &str = "---
change_id: add-login
owner: someone
---

# Tasks

## 1. Data Layer

- [ ] 1.1 Add the `users` table
- [x] 1.2 Add the migration

## 2. Core logic

- [ ] 2.1 Hash passwords
  - [ ] 2.1.1 Pick argon2
  - a note, not a task

## 3. Integration tests

- [ ] 3.1 Log in end to end

## 4. Rollout

- [ ] 4.1 Tell support
- plain bullet
";

#[test]
fn parses_items_sections_and_layers() {
    let list = parse_tasks(TASKS, "add-login").expect("valid");
    assert_eq!(list.change_id, "add-login");
    assert_eq!(list.change_id_source, ChangeIdSource::FrontMatter);
    let ids: Vec<_> = list
        .tasks
        .iter()
        .map(|t| t.id.as_deref().unwrap_or("-"))
        .collect();
    assert_eq!(ids, ["1.1", "1.2", "2.1", "2.1.1", "3.1", "4.1"]);
    let first = &list.tasks[0];
    assert_eq!(first.text, "Add the users table");
    assert_eq!(first.section.as_deref(), Some("1. Data Layer"));
    assert_eq!(
        (first.layer, first.done, first.line),
        (Some(Layer::Data), false, 10)
    );
    assert!(list.tasks[1].done);
    assert_eq!(list.tasks[2].text, "Hash passwords");
    assert_eq!(list.tasks[3].layer, Some(Layer::Logic));
    assert_eq!(list.tasks[4].layer, Some(Layer::Testing));
    assert_eq!(list.unclassified, [5], "the rollout task is reported");
    let open: Vec<_> = list.open_tasks().iter().map(|t| t.line).collect();
    assert_eq!(open.len(), 5);
}

#[test]
fn without_front_matter_the_folder_names_the_change() {
    let list = parse_tasks("## 1. Data Layer\n- [ ] 1.1 x\n", "from-folder").expect("valid");
    assert_eq!(list.change_id, "from-folder");
    assert_eq!(list.change_id_source, ChangeIdSource::Folder);
    assert_eq!(list.tasks[0].layer, Some(Layer::Data));
    let incomplete = parse_tasks("---\ntitle: x\n---\n- [ ] 1 y\n", "f").expect("valid");
    assert_eq!(incomplete.change_id_source, ChangeIdSource::Folder);
    assert_eq!(incomplete.unclassified, [0]);
}

#[test]
fn front_matter_errors() {
    assert_eq!(
        parse_tasks("---\nchange_id: other\n---\n", "mine"),
        Err(TasksError::WrongChange {
            front_matter: "other".into(),
            folder: "mine".into()
        })
    );
    let err = parse_tasks("---\nchange_id: [x\n---\n", "mine").expect_err("bad yaml");
    assert!(matches!(err, TasksError::FrontMatter { .. }), "{err}");
    let err = parse_tasks("---\nchange_id: Bad_Id\n---\n", "mine").expect_err("bad id");
    assert!(err.to_string().contains("Bad_Id"), "{err}");
}

#[test]
fn headings_map_to_layers() {
    let cases = [
        ("1. Data Layer", Some(Layer::Data)),
        ("Database schema", Some(Layer::Data)),
        ("2. Logic layer (integration-ready)", Some(Layer::Logic)),
        ("3. API and CLI wiring", Some(Layer::Integration)),
        ("Integration tests", Some(Layer::Testing)),
        ("4. Testing", Some(Layer::Testing)),
        ("Core engine", Some(Layer::Logic)),
        ("5. Rollout", None),
        ("6. Documentation", None),
    ];
    for (title, want) in cases {
        assert_eq!(classify_heading(title), want, "{title}");
    }
}

#[test]
fn check_off_ticks_exactly_one_box() {
    let out = check_off(TASKS, "2.1").expect("tick");
    assert_eq!(out, TASKS.replacen("- [ ] 2.1 Hash", "- [x] 2.1 Hash", 1));
    let nested = check_off(&out, "2.1.1").expect("tick nested");
    assert_eq!(nested, out.replacen("- [ ] 2.1.1", "- [x] 2.1.1", 1));
    assert_eq!(check_off(TASKS, "1.2").expect("already ticked"), TASKS);
    assert_eq!(
        check_off(TASKS, "9.9"),
        Err(TasksError::UnknownTask { id: "9.9".into() })
    );
    let twice = "- [ ] 1.1 a\n- [ ] 1.1 b\n";
    assert_eq!(
        check_off(twice, "1.1"),
        Err(TasksError::AmbiguousTask {
            id: "1.1".into(),
            count: 2
        })
    );
}

#[test]
fn rendered_tasks_parse_back() {
    let text = render_tasks(
        "add-x",
        &[("Data Layer", &["Add table"]), ("Testing", &["Test it"])],
    );
    let list = parse_tasks(&text, "add-x").expect("valid");
    assert_eq!(list.change_id_source, ChangeIdSource::FrontMatter);
    let got: Vec<_> = list
        .tasks
        .iter()
        .map(|t| (t.id.clone().unwrap_or_default(), t.text.as_str(), t.layer))
        .collect();
    assert_eq!(
        got,
        [
            ("1.1".to_owned(), "Add table", Some(Layer::Data)),
            ("2.1".to_owned(), "Test it", Some(Layer::Testing))
        ]
    );
}

#[test]
fn line_index_numbers_lines_from_one() {
    let text = "a\nbc\n\nd";
    let lines = LineIndex::new(text);
    let want = [1, 1, 2, 2, 2, 3, 4];
    for (offset, line) in want.iter().enumerate() {
        assert_eq!(lines.line_of(offset), *line, "offset {offset}");
    }
    assert_eq!(lines.line_of(text.len()), 4, "the end is on the last line");
    assert_eq!(LineIndex::new("").line_of(0), 1);
    // It agrees with counting the newlines before the offset, which it replaces.
    for offset in 0..=TASKS.len() {
        assert_eq!(
            LineIndex::new(TASKS).line_of(offset),
            TASKS[..offset].matches('\n').count() + 1
        );
    }
}

/// `count` numbered tasks under one heading, the last one ticked.
fn many_tasks(count: usize) -> String {
    let mut text = String::from("---\nchange_id: big\n---\n\n## 1. Logic Layer\n\n");
    for i in 1..=count {
        let mark = if i == count { 'x' } else { ' ' };
        text.push_str(&format!("- [{mark}] 1.{i} Task number {i}\n"));
    }
    text
}

#[test]
fn regression_two_hundred_thousand_tasks_parse_in_one_pass() {
    // Counting the newlines before each item made this quadratic: 16k tasks took 1.4 s and
    // 200k never finished. It must simply finish.
    let text = many_tasks(200_000);
    let list = parse_tasks(&text, "big").expect("valid");
    assert_eq!(list.tasks.len(), 200_000);
    let last = &list.tasks[199_999];
    assert_eq!(last.id.as_deref(), Some("1.200000"));
    assert_eq!(last.line, 200_006, "line numbers stay exact");
    assert!(last.done && list.unclassified.is_empty());
    assert_eq!(list.open_tasks().len(), 199_999);
    // Ticking every open task is one pass too.
    let open: Vec<String> = list
        .open_tasks()
        .iter()
        .filter_map(|t| t.id.clone())
        .collect();
    let ids: Vec<&str> = open.iter().map(String::as_str).collect();
    let ticked = check_off_many(&text, &ids).expect("tick all");
    assert_eq!(ticked, text.replace("- [ ]", "- [x]"));
}

#[test]
fn check_off_many_ticks_each_named_box_or_none() {
    let out = check_off_many(TASKS, &["1.1", "2.1.1", "1.2"]).expect("tick");
    assert_eq!(
        out,
        TASKS
            .replacen("- [ ] 1.1 Add", "- [x] 1.1 Add", 1)
            .replacen("- [ ] 2.1.1", "- [x] 2.1.1", 1)
    );
    assert_eq!(check_off_many(TASKS, &[]).expect("nothing"), TASKS);
    assert_eq!(
        check_off_many(TASKS, &["1.1", "9.9"]),
        Err(TasksError::UnknownTask { id: "9.9".into() })
    );
    let twice = "- [ ] 1.1 a\n- [ ] 1.1 b\n- [ ] 1.2 c\n";
    assert_eq!(
        check_off_many(twice, &["1.2", "1.1"]),
        Err(TasksError::AmbiguousTask {
            id: "1.1".into(),
            count: 2
        })
    );
}

/// Issue 32: at the first green every numbered task with a layer is ticked, with a note; a
/// task whose layer cannot be told (or that has no number) is reported, not ticked.
#[test]
fn at_green_ticks_numbered_tasks_with_a_layer_and_reports_the_rest() {
    let text = "## 1. Logic Layer\n- [ ] 1.1 add\n- [x] 1.2 done before\n- [ ] no number\n\n## 2. Polish\n- [ ] 2.1 Make it nice\n";
    let list = parse_tasks(text, "add-calc").expect("parse");
    let at = list.at_green();
    let ids = |v: &[&Task]| -> Vec<String> { v.iter().map(|t| t.text.clone()).collect() };
    assert_eq!(ids(&at.tick), ["add"]);
    assert_eq!(ids(&at.no_number), ["no number"]);
    assert_eq!(ids(&at.no_layer), ["Make it nice"]);
    let notes = green_notes(&at);
    assert!(notes[0].starts_with("task 1.1 (Logic layer) done, the tests pass: add (every task is ticked at the first green run"), "{notes:?}");
    assert!(
        notes[2].contains("task 2.1 `Make it nice` (tasks.md line 7) is not ticked"),
        "{notes:?}"
    );
}
