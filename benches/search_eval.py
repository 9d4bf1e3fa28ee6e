#!/usr/bin/env python3
"""How well the search on a miss finds a skill from words of its description
(stdlib only).

    cargo build --release && python3 benches/search_eval.py [--bin PATH] [--seed 2]

For each corpus size (1,000 and 10,000 skills by default; corpora from
benches/make_corpus.py, seed 1, shared with the other benchmarks) it starts
the real binary, reads every skill's name and description with
`skillserve list --json`, and makes QUERIES queries, each for one target skill
drawn at random:

  * plain:     3 to 5 distinct content words of the target's description
               (words of three or more characters that are not common English
               words), shuffled;
  * typo:      the same, with one edit (a deletion, an insertion, a
               substitution or two swapped neighbours) in one word of five or
               more characters;
  * inflected: the same, with one word in another form (a plural `s` added or
               removed, or `-ing` added).

The corpus's descriptions are drawn from a small vocabulary, so many queries
fit several skills equally well: the report gives the share of queries whose
words (before any typo or change of form) all appear in three or more other
skills' descriptions, for which no ranking can be sure of a top 3, and the top 3
of the queries whose words only the target has together.

Each query is sent as `tools/call` `{"name": "skill", "arguments": {"name":
QUERY}}` over stdio; the names listed in the "not found" answer (lines
`- name: description`) are the ranking. It reports, per size and kind, the
fraction of queries whose target is listed first (top 1), in the first three
(top 3) and at all (top 5, the answer lists at most five), and the median round
trip of a miss (a Python client over pipes; a miss rescans at most once a
second, which the p90 shows).

The queries depend only on --seed and the corpus: the figures in
benches/README.md are for --seed 2; any tuning of the search was done with
other seeds, so that seed 2 stays held out. The script builds nothing.
"""

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402

KINDS = ("plain", "typo", "inflected")

# Common English words a person would not use to describe a task. This list is
# the evaluation's own, not the server's.
COMMON = set("""
the and for with from into this that these those when where which while what who how why
use used uses using you your our are was were been being have has had can could will would
should may might must not all any each every some such than then them they their there here
its also just only very more most much many other over under about after before between
keeps keep make makes made like well into onto upon via per out off too
""".split())

WORD = re.compile(r"[^\W_]+")
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def content_words(description):
    seen, words = set(), []
    for word in WORD.findall(description):
        lower = word.lower()
        if len(lower) < 3 or lower in COMMON or lower.isdigit() or lower in seen:
            continue
        seen.add(lower)
        words.append(lower)
    return words


def typo(word, rng):
    i = rng.randrange(len(word))
    edit = rng.choice(("delete", "insert", "substitute", "swap"))
    if edit == "delete":
        return word[:i] + word[i + 1:]
    if edit == "insert":
        return word[:i] + rng.choice(LETTERS) + word[i:]
    if edit == "substitute":
        other = rng.choice([c for c in LETTERS if c != word[i]])
        return word[:i] + other + word[i + 1:]
    i = min(i, len(word) - 2)
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def inflectable(word):
    return word.isascii() and word.isalpha() and not word.endswith(("ss", "us", "is", "ing", "ed", "ly"))


def inflect(word, rng):
    """Another form of `word`: without its plural `s`, with one, or with `-ing`."""
    if word.endswith("s"):
        return word[:-1]
    if rng.random() < 0.5:
        return word + ("es" if word.endswith(("x", "ch", "sh")) else "s")
    return (word[:-1] if word.endswith("e") else word) + "ing"


def make_queries(skills, count, seed):
    """[(kind, target name, query, original words)]: `count` queries, kinds in
    rotation."""
    rng = random.Random(seed)
    usable = [s for s in skills if len(content_words(s["description"])) >= 3]
    queries = []
    while len(queries) < count:
        skill = rng.choice(usable)
        words = content_words(skill["description"])
        chosen = rng.sample(words, min(len(words), rng.randint(3, 5)))
        original = list(chosen)
        kind = KINDS[len(queries) % len(KINDS)]
        if kind == "typo":
            long = [i for i, w in enumerate(chosen) if len(w) >= 5 and w.isascii()]
            if not long:
                continue
            i = rng.choice(long)
            chosen[i] = typo(chosen[i], rng)
        elif kind == "inflected":
            candidates = [i for i, w in enumerate(chosen) if inflectable(w)]
            if not candidates:
                continue
            i = rng.choice(candidates)
            chosen[i] = inflect(chosen[i], rng)
        rng.shuffle(chosen)
        queries.append((kind, skill["name"], " ".join(chosen), original))
    return queries


def rivals(skills, queries):
    """Per query, how many other skills have all its original words (before
    any typo or change of form) in their descriptions."""
    sets = [(s["name"], set(w.lower() for w in WORD.findall(s["description"]))) for s in skills]
    return [sum(1 for name, words in sets if name != target and all(w in words for w in original))
            for _, target, _, original in queries]


def listed(text):
    """The names a "not found" answer lists, best first."""
    names = []
    for line in text.splitlines():
        if line.startswith("- "):
            names.append(line[2:].split(": ", 1)[0])
    return names


def list_skills(binary, skills_dir):
    out = subprocess.run(
        [binary, "list", "--json", "--skills-dir", skills_dir, "--no-user", "--no-project", "--no-plugins"],
        capture_output=True, text=True, check=True, env={"HOME": tempfile.gettempdir(), "PATH": "/usr/bin:/bin"})
    return [{"name": s["name"], "description": s["description"]} for s in json.loads(out.stdout)]


def evaluate(binary, skills_dir, queries, timeout):
    """{kind: [rank or None]} and the round trips in seconds."""
    ranks = {kind: [] for kind in KINDS}
    trips = []
    with tempfile.TemporaryDirectory(prefix="skillserve-eval-home-") as home:
        def body(server):
            server.start()
            for kind, target, query, _ in queries:
                started = time.perf_counter()
                result = server.request("tools/call", {"name": "skill", "arguments": {"name": query}})
                trips.append(time.perf_counter() - started)
                text = "".join(block.get("text", "") for block in result.get("content", []))
                if not result.get("isError"):
                    names = [text.split("\n", 1)[0].removeprefix("Loading: ")]
                else:
                    names = listed(text)
                ranks[kind].append(names.index(target) + 1 if target in names else None)
            server.stop()

        e2e.run(binary, skills_dir, home, timeout, body,
                extra_args=("--no-watch", "--refresh-interval", "0"))
    return ranks, trips


def share(ranks, within):
    return sum(1 for r in ranks if r is not None and r <= within) / len(ranks)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(e2e.REPO, "target", "release", "skillserve"),
                    help="the skillserve binary (default: target/release/skillserve)")
    ap.add_argument("--sizes", default="1000,10000", help="corpus sizes (default 1000,10000)")
    ap.add_argument("--queries", type=int, default=1500, help="queries per size (default 1500)")
    ap.add_argument("--seed", type=int, default=2, help="seed of the queries (default 2, the reported one)")
    ap.add_argument("--corpus-root", default=os.path.join(e2e.target_dir(), "bench-corpus"),
                    help="where corpora are cached (default target/bench-corpus)")
    ap.add_argument("--show", type=int, default=0, help="print this many queries whose target was not in the top 3")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for any one response")
    a = ap.parse_args(argv)

    binary = os.path.abspath(a.bin)
    if not os.access(binary, os.X_OK):
        print(f"search_eval: {binary} is not an executable; run `cargo build --release` first", file=sys.stderr)
        return 2
    rows = []
    for n in [int(s) for s in a.sizes.split(",") if s.strip()]:
        skills_dir = e2e.corpus(n, a.corpus_root, e2e.MAKE_CORPUS)
        skills = list_skills(binary, skills_dir)
        queries = make_queries(skills, a.queries, a.seed)
        print(f"search_eval: {len(queries)} queries at {n} skills …", file=sys.stderr)
        try:
            ranks, trips = evaluate(binary, skills_dir, queries, a.timeout)
        except e2e.ServerError as err:
            print(f"search_eval: {err}", file=sys.stderr)
            return 2
        every = [r for kind in KINDS for r in ranks[kind]]
        for kind in (*KINDS, "all"):
            got = every if kind == "all" else ranks[kind]
            rows.append((n, kind, len(got), share(got, 1), share(got, 3), share(got, 5)))
        counts = rivals(skills, queries)
        in_order = {kind: iter(ranks[kind]) for kind in KINDS}
        flat = [next(in_order[kind]) for kind, _, _, _ in queries]
        alone = [rank for rank, count in zip(flat, counts) if count == 0]
        crowded = sum(count >= 3 for count in counts) / len(counts)
        rows.append((n, "miss round trip", statistics.median(trips) * 1e3, e2e.percentile(trips, 90) * 1e3,
                     crowded, share(alone, 3), len(alone)))
        if a.show:
            by_query = {kind: iter(ranks[kind]) for kind in KINDS}
            missed = [(k, t, q, r) for k, t, q, _ in queries for r in [next(by_query[k])] if r is None or r > 3]
            for kind, target, query, rank in missed[:a.show]:
                print(f"  {n} {kind}: {query!r} → {target} (rank {rank})", file=sys.stderr)

    print(f"\nsearch_eval — `{os.path.basename(binary)}`, query seed {a.seed}, corpus seed 1\n")
    print("| skills | queries | n | top 1 | top 3 | top 5 |")
    print("|---:|---|---:|---:|---:|---:|")
    for row in rows:
        if len(row) == 6:
            n, kind, count, top1, top3, top5 = row
            print(f"| {n:,} | {kind} | {count} | {top1:.1%} | {top3:.1%} | {top5:.1%} |")
    print()
    for row in rows:
        if len(row) == 7:
            n, _, median, p90, crowded, alone_top3, alone = row
            print(f"at {n:,} skills: {crowded:.1%} of the queries have all their words in the descriptions of "
                  f"3 or more other skills; of the {alone} whose words only the target has together, "
                  f"{alone_top3:.1%} found it in the top 3; miss round trip median {median:.2f} ms, p90 {p90:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
