#!/usr/bin/env python3
"""LangGraph reference of gavel's brief -> issue workflow, for bench/run.

The same nodes and routing as gavel's workflow (README.md, "The brief -> issue workflow"):

    N0 load brief -> N1 preflight -> N2 draft -> N3 draft gate -> N4 review -> N5 verdict gate
                                      ^                                          | REVISE
                                      +------------------------------------------+
                                                                                 | APPROVED -> N6 file

in auto mode (the draft gate sends, the verdict gate routes by the parsed verdict), with
instant scripted responses (LOOPS REVISE verdicts, then APPROVED; drafts are fixed strings,
optionally padded to a given size), lineage files (`NNN-brief.md`, `NNN-draft.md`,
`NNN-verdict.md`, `NNN-filed.json`) in a lineage folder, and a SqliteSaver checkpoint after
every node (durability="sync": each checkpoint is written before the next node starts, as
gavel's are).

Modes (argv):
    run [--dir D] [--db F] [--loops 3] [--draft-bytes 0] [--id X]
        one whole run, as `gavel issue --auto` (the process is timed from outside)
    steps N [--db F] [--dir D]
                            time about N node steps in process, after the imports and the graph
                            build; prints `ms_per_step=X steps=N`

`--db` is a SQLite file, or a `postgresql://` URL for LangGraph's PostgresSaver (`run` and
`steps`; the database must exist).
    storage LOOPS DRAFT_BYTES [--db F]
                            one run with LOOPS revision loops and drafts of DRAFT_BYTES; prints
                            `db_bytes=N` (database + WAL + shm) and the lineage bytes
    resume STEPS [--db F]   make a thread of about STEPS steps (if F has none), then time
                            `graph.get_state(config)` in a NEW process; prints
                            `inner_ms=X process_ms=Y steps=N`
    get-state DB            (the new process of `resume`) prints `inner_ms=X steps=N`
    tokens FILE             count FILE's tokens with tiktoken o200k_base; prints
                            `tokens=N ms=X load_ms=Y`
    make-tokens-file OUT N SRC...
                            write the first N o200k tokens of the concatenated SRC files
                            (repeated as needed) to OUT
    gavel-script OUT LOOPS DRAFT_BYTES [--unparseable-last]
                            write a gavel `scripted` provider YAML file with exactly the drafts
                            and verdicts this reference uses
"""

import json
import os
import random
import sys
import time

T_START = time.perf_counter()

LINEAGE_DEFAULT = "lineage"
THREAD_RESUME = "resume-thread"


# --- scripted responses (shared with the gavel script, so both sides see the same bytes) -------

WORDS = (
    "the dashboard draft review verdict gate brief issue lineage model person state checkpoint "
    "resume crash file commit label tracker rubric finding revise approve pause budget spend "
    "token provider drafter reviewer workflow node engine store sqlite journal step run slug "
    "folder template error retry timeout editor terminal colour theme night bright dark mode "
    "user setting toggle contrast accessibility screen display option default preference"
).split()


def draft_text(n, size):
    """Draft number n (1-based): a fixed heading, padded with distinct prose to `size` bytes."""
    head = (
        f"# Add dark mode v{n}\n\n**Labels:** enhancement\n\n## Why\n"
        "The dashboard is too bright at night.\n\n## What\nA dark theme.\n\n"
        "## Acceptance criteria\n- [ ] Dark theme\n\n## Out of scope\nOther themes.\n\n"
        "## Notes\nNone.\n\n## Details\n"
    )
    if size <= len(head):
        return head
    rng = random.Random(n)
    parts = [head]
    length = len(head)
    line = []
    while length < size:
        w = rng.choice(WORDS)
        line.append(w)
        length += len(w) + 1
        if len(line) >= 12:
            parts.append(" ".join(line) + ".\n")
            line = []
    if line:
        parts.append(" ".join(line) + ".\n")
    return "".join(parts)[:size]


def verdict_text(i, loops):
    """Reviewer answer i (1-based): REVISE for the first `loops`, then APPROVED."""
    if i <= loops:
        return '```json\n{"verdict": "REVISE", "findings": ["more detail"]}\n```\n'
    return '```json\n{"verdict": "APPROVED", "findings": []}\n```\n'


def parse_verdict(text):
    start = text.find("```json")
    if start < 0:
        return None
    end = text.find("```", start + 7)
    try:
        v = json.loads(text[start + 7 : end])
    except ValueError:
        return None
    return v


# --- the graph ----------------------------------------------------------------------------------

def build_graph(checkpointer, write_files=True):
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class State(TypedDict, total=False):
        brief_path: str
        lineage: str
        loops: int
        draft_bytes: int
        seq: int  # last lineage number used
        brief: str
        draft: str
        drafts: int
        verdicts: list
        verdict: str
        steps: int
        filed: dict

    def save(state, name, text):
        seq = state.get("seq", 0) + 1
        if write_files:
            with open(os.path.join(state["lineage"], f"{seq:03d}-{name}"), "w") as f:
                f.write(text)
        return seq

    def n0_load_brief(state):
        with open(state["brief_path"]) as f:
            brief = f.read()
        if not brief.strip():
            raise ValueError("empty brief")
        if write_files:
            os.makedirs(state["lineage"], exist_ok=True)
        seq = save(state, "brief.md", brief)
        return {"brief": brief, "seq": seq, "steps": state.get("steps", 0) + 1, "verdicts": []}

    def n1_preflight(state):
        # Tracker, providers, template and rubric: all in process here.
        if not os.path.isdir(state["lineage"]) and write_files:
            raise RuntimeError("lineage folder missing")
        return {"steps": state["steps"] + 1}

    def n2_draft(state):
        n = state.get("drafts", 0) + 1
        text = draft_text(n, state.get("draft_bytes", 0))
        i = text.find("#")
        text = text[i:] if i >= 0 else text
        seq = save(state, "draft.md", text)
        return {"draft": text, "drafts": n, "seq": seq, "steps": state["steps"] + 1}

    def n3_draft_gate(state):
        return {"steps": state["steps"] + 1}  # auto: send

    def n4_review(state):
        i = len(state.get("verdicts", [])) + 1
        answer = verdict_text(i, state.get("loops", 3))
        v = parse_verdict(answer)
        verdict = v["verdict"] if v and not v.get("findings") else (v or {}).get("verdict", "UNPARSEABLE")
        if v and v.get("findings") and verdict == "APPROVED":
            verdict = "REVISE"
        header = f"<!-- reviewer: scripted, model: scripted-bench, verdict: {verdict}, auto_mode: true -->\n"
        seq = save(state, "verdict.md", header + answer)
        return {
            "verdicts": state.get("verdicts", []) + [answer],
            "verdict": verdict,
            "seq": seq,
            "steps": state["steps"] + 1,
        }

    def n5_verdict_gate(state):
        return {"steps": state["steps"] + 1}  # auto: route by verdict

    def route(state):
        return "N6_file" if state["verdict"] == "APPROVED" else "N2_draft"

    def n6_file(state):
        draft = state["draft"]
        title = next((l[2:] for l in draft.splitlines() if l.startswith("# ")), "untitled")
        filed = {"issue": 1, "title": title, "labels": ["enhancement"], "auto_mode": True}
        seq = save(state, "filed.json", json.dumps(filed, indent=2) + "\n")
        return {"filed": filed, "seq": seq, "steps": state["steps"] + 1}

    g = StateGraph(State)
    g.add_node("N0_load_brief", n0_load_brief)
    g.add_node("N1_preflight", n1_preflight)
    g.add_node("N2_draft", n2_draft)
    g.add_node("N3_draft_gate", n3_draft_gate)
    g.add_node("N4_review", n4_review)
    g.add_node("N5_verdict_gate", n5_verdict_gate)
    g.add_node("N6_file", n6_file)
    g.add_edge(START, "N0_load_brief")
    g.add_edge("N0_load_brief", "N1_preflight")
    g.add_edge("N1_preflight", "N2_draft")
    g.add_edge("N2_draft", "N3_draft_gate")
    g.add_edge("N3_draft_gate", "N4_review")
    g.add_edge("N4_review", "N5_verdict_gate")
    g.add_conditional_edges("N5_verdict_gate", route, ["N2_draft", "N6_file"])
    g.add_edge("N6_file", END)
    return g.compile(checkpointer=checkpointer)


def open_saver(db):
    if db.startswith("postgresql://") or db.startswith("postgres://"):
        # LangGraph's Postgres checkpointer, as its documentation sets it up (autocommit,
        # prepared statements off, dict rows); the server's durability as configured.
        import psycopg
        from psycopg.rows import dict_row

        from langgraph.checkpoint.postgres import PostgresSaver

        conn = psycopg.connect(db, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        saver = PostgresSaver(conn)
        saver.setup()
        return saver, conn
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(db, check_same_thread=False)
    # The same durability as gavel's store (WAL, synchronous=NORMAL): a committed checkpoint
    # survives kill -9 of the process (not a power cut) without an fsync per commit.
    conn.execute("PRAGMA synchronous=NORMAL")
    saver = SqliteSaver(conn)
    saver.setup()
    return saver, conn


def loops_for_steps(steps):
    # N0, N1, then 4 nodes (N2..N5) per draft, then N6: 3 + 4 * (loops + 1) steps.
    return max(0, (steps - 7) // 4)


def steps_for_loops(loops):
    return 3 + 4 * (loops + 1)


def invoke(graph, thread, state, steps):
    config = {"configurable": {"thread_id": thread}, "recursion_limit": steps + 20}
    return graph.invoke(state, config, durability="sync")


def write_brief(path):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write("# Dark mode\n\nPeople want a dark mode.\n")


def db_bytes(db):
    return sum(os.path.getsize(p) for p in (db, db + "-wal", db + "-shm") if os.path.exists(p))


def opt(args, name, default):
    if name in args:
        i = args.index(name)
        return args[i + 1]
    return default


# --- modes --------------------------------------------------------------------------------------

def mode_run(args):
    d = opt(args, "--dir", ".")
    db = opt(args, "--db", os.path.join(d, "checkpoints.sqlite"))
    loops = int(opt(args, "--loops", "3"))
    size = int(opt(args, "--draft-bytes", "0"))
    run_id = opt(args, "--id", str(os.getpid()))
    brief = os.path.join(d, "ideas", f"idea-{run_id}.md")
    if not os.path.exists(brief):
        write_brief(brief)
    saver, conn = open_saver(db)
    graph = build_graph(saver)
    lineage = os.path.join(d, LINEAGE_DEFAULT, "active", f"idea-{run_id}")
    out = invoke(
        graph,
        f"run-{run_id}",
        {"brief_path": brief, "lineage": lineage, "loops": loops, "draft_bytes": size},
        steps_for_loops(loops),
    )
    conn.close()
    assert out["filed"]["title"].startswith("Add dark mode"), out
    print(f"steps={out['steps']} drafts={out['drafts']} lineage={lineage}")


def mode_steps(args):
    n = int(args[0])
    db = opt(args, "--db", "steps.sqlite")
    postgres = db.startswith("postgres")
    for p in () if postgres else (db, db + "-wal", db + "-shm"):
        if os.path.exists(p):
            os.remove(p)
    d = os.path.abspath(opt(args, "--dir", ".")) if postgres else os.path.dirname(os.path.abspath(db))
    brief = os.path.join(d, "steps-brief.md")
    write_brief(brief)
    saver, conn = open_saver(db)
    if postgres:
        # A database that outlives one call keeps the thread: it would go on from its last
        # state (and `steps` count) instead of starting afresh, as the SQLite file does.
        saver.delete_thread("steps")
    # No lineage files: like `gavel-bench steps`, this times the engine and its checkpoints.
    graph = build_graph(saver, write_files=False)
    loops = loops_for_steps(n)
    state = {"brief_path": brief, "lineage": d, "loops": loops, "draft_bytes": 0}
    t0 = time.perf_counter()
    out = invoke(graph, "steps", state, steps_for_loops(loops))
    ms = (time.perf_counter() - t0) * 1000
    conn.close()
    print(f"ms_per_step={ms / out['steps']:.4f} steps={out['steps']} total_ms={ms:.1f}")


def mode_storage(args):
    loops, size = int(args[0]), int(args[1])
    db = opt(args, "--db", "storage.sqlite")
    d = opt(args, "--dir", os.path.dirname(os.path.abspath(db)))
    for p in (db, db + "-wal", db + "-shm"):
        if os.path.exists(p):
            os.remove(p)
    brief = os.path.join(d, "storage-brief.md")
    write_brief(brief)
    saver, conn = open_saver(db)
    graph = build_graph(saver)
    lineage = os.path.join(d, LINEAGE_DEFAULT, "active", "storage")
    out = invoke(
        graph,
        "storage",
        {"brief_path": brief, "lineage": lineage, "loops": loops, "draft_bytes": size},
        steps_for_loops(loops),
    )
    conn.close()
    lin = sum(os.path.getsize(os.path.join(lineage, f)) for f in os.listdir(lineage))
    print(f"db_bytes={db_bytes(db)} steps={out['steps']} drafts={out['drafts']} lineage_bytes={lin}")


def mode_resume(args):
    import subprocess

    steps = int(args[0])
    db = opt(args, "--db", "resume.sqlite")
    d = os.path.dirname(os.path.abspath(db))
    saver, conn = open_saver(db)
    graph = build_graph(saver)
    config = {"configurable": {"thread_id": THREAD_RESUME}}
    if not graph.get_state(config).values:
        brief = os.path.join(d, "resume-brief.md")
        write_brief(brief)
        loops = loops_for_steps(steps)
        invoke(
            graph,
            THREAD_RESUME,
            {"brief_path": brief, "lineage": os.path.join(d, "resume-lineage"), "loops": loops},
            steps_for_loops(loops),
        )
    conn.close()
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "get-state", db],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    process_ms = (time.perf_counter() - t0) * 1000
    print(f"{out} process_ms={process_ms:.1f}")


def mode_get_state(args):
    db = args[0]
    saver, conn = open_saver(db)
    graph = build_graph(saver)
    t0 = time.perf_counter()
    snap = graph.get_state({"configurable": {"thread_id": THREAD_RESUME}})
    ms = (time.perf_counter() - t0) * 1000
    conn.close()
    steps = snap.values.get("steps")
    if not steps:
        sys.exit("no thread in " + db)
    print(f"inner_ms={ms:.3f} steps={steps} import_ms={(t0 - T_START) * 1000:.1f}")


def encoding():
    import tiktoken

    return tiktoken.get_encoding("o200k_base")


def mode_tokens(args):
    with open(args[0], encoding="utf-8") as f:
        text = f.read()
    t0 = time.perf_counter()
    enc = encoding()
    t1 = time.perf_counter()
    n = len(enc.encode_ordinary(text))
    t2 = time.perf_counter()
    print(f"tokens={n} ms={(t2 - t1) * 1000:.2f} load_ms={(t1 - t0) * 1000:.1f}")


def mode_make_tokens_file(args):
    out, n, srcs = args[0], int(args[1]), args[2:]
    text = ""
    for s in srcs:
        with open(s, encoding="utf-8", errors="replace") as f:
            text += f.read() + "\n"
    if not text.strip():
        sys.exit("no source text")
    enc = encoding()
    toks = enc.encode_ordinary(text)
    reps = 0
    while len(toks) < n and reps < 1000:
        toks = toks + enc.encode_ordinary(text)
        reps += 1
    # Decode the first n tokens; re-encoding may differ by a few tokens at the cut, which is fine.
    body = enc.decode(toks[:n])
    with open(out, "w", encoding="utf-8") as f:
        f.write(body)
    print(f"tokens={len(enc.encode_ordinary(body))} bytes={len(body.encode())}")


def yaml_str(s):
    # JSON double-quoted strings are valid YAML double-quoted strings for ASCII text.
    return json.dumps(s, ensure_ascii=True)


def mode_gavel_script(args):
    out, loops, size = args[0], int(args[1]), int(args[2])
    unparseable_last = "--unparseable-last" in args
    lines = ["model: scripted-bench", "drafter:"]
    for n in range(1, loops + 2):
        lines.append(f"  - text: {yaml_str(draft_text(n, size))}")
    lines.append("reviewer:")
    for i in range(1, loops + 2):
        text = verdict_text(i, loops)
        if unparseable_last and i == loops + 1:
            text = "I cannot decide; no verdict block here.\n"
        lines.append(f"  - text: {yaml_str(text)}")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


MODES = {
    "run": mode_run,
    "steps": mode_steps,
    "storage": mode_storage,
    "resume": mode_resume,
    "get-state": mode_get_state,
    "tokens": mode_tokens,
    "make-tokens-file": mode_make_tokens_file,
    "gavel-script": mode_gavel_script,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in MODES:
        sys.exit(__doc__)
    MODES[sys.argv[1]](sys.argv[2:])
