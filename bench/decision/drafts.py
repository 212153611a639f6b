"""Save the model's drafts for a gold set, so the decision can be trained and scored offline.

    python -m bench.decision.drafts --db WAREHOUSE --gold GOLD.json --out DRAFTS.jsonl \
        --made-by "qwen2.5-coder-1.5b-instruct q4_k_m, llama-cpp-python server, default threads"

Reads each gold paper's latest extraction from a warehouse that a real run filled, and
writes one JSON line per paper: its id, title, abstract and the model's raw draft (the
answer before grounding). The first line is a header saying which model and server made
the drafts; grounding code never changes a draft, so a changed rule is scored on these
without running the model again.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import duckdb


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--gold", action="append", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--made-by", required=True, help="the model and server, for the header")
    parser.add_argument("--allow-missing", action="store_true",
                        help="skip papers the run failed (scored as missing)")
    args = parser.parse_args()
    wanted: list[str] = []
    for path in args.gold:
        wanted += [p["paper_id"] for p in json.loads(Path(path).read_text())["papers"]]
    con = duckdb.connect(args.db, read_only=True)
    rows = con.execute(
        """select p.paper_id, any_value(s.title), any_value(p.text), arg_max(e.raw_json, e.created),
                  any_value(e.model), any_value(e.prompt_version), any_value(e.schema_version)
           from papers p join extractions e using (paper_id)
           left join sources s using (paper_id)
           where p.paper_id in (select unnest(?)) group by p.paper_id""", [wanted]).fetchall()
    by_id = {row[0]: row for row in rows}
    missing = [pid for pid in wanted if pid not in by_id]
    if missing and args.allow_missing:
        print(f"{len(missing)} gold papers have no extraction (failed): left out")
        wanted = [pid for pid in wanted if pid in by_id]
    elif missing:
        raise SystemExit(f"{args.db}: no extraction for {len(missing)} gold papers, "
                         f"e.g. {missing[0]}")
    first = by_id[wanted[0]]
    with args.out.open("w", encoding="utf-8") as out:
        out.write(json.dumps({"drafts_by": args.made_by, "model": first[4],
                              "prompt_version": first[5], "schema_version": first[6],
                              "papers": len(wanted)}) + "\n")
        for pid in wanted:
            _, title, text, raw, *_ = by_id[pid]
            out.write(json.dumps({"paper_id": pid, "title": title, "text": text,
                                  "draft": json.loads(raw)}, ensure_ascii=False) + "\n")
    print(f"{len(wanted)} drafts -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
