#!/usr/bin/env python3
"""The security scan's calibration: what it catches and what it wrongly flags
(stdlib only).

    cargo build --release
    python3 benches/calibrate.py [--bin PATH] [--repo DIR]... [-v]

1. Catch rate. `fixtures/variants/generate.py --large` writes the variant set
   (attack/: one skill per payload; benign/: honest skills close to the
   rules) into a temporary repository's `.claude/skills`, and
   `check --security --json` runs there as on a project: every attack must
   be quarantined (an error-level finding), no benign control may be. Prints
   each variant with the codes of its errors, then the catch rate and the
   benign controls with an error or a warning.

2. False positives. For each --repo DIR (a folder holding skill folders at
   any depth, such as a checkout of anthropics/skills, obra/superpowers,
   trailofbits/skills or K-Dense-AI/claude-scientific-skills),
   `check --security --json --skills-dir DIR` and the count of error,
   warning and note findings (with -v, each error and warning).

Nothing here is timed; benches/security.py measures the scan's cost.
"""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import e2e  # noqa: E402  (target_dir)


def check(binary, args, home):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "SKILLSERVE_LOG": "error"}
    done = subprocess.run([binary, *args, "check", "--security", "--json"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=home)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        sys.exit(f"{binary} {' '.join(args)}: no JSON (exit {done.returncode}): {done.stderr.decode()[:2000]}")


def variants(binary, verbose):
    with tempfile.TemporaryDirectory(prefix="skillserve-calibrate-") as tmp:
        generated = os.path.join(tmp, "generated")
        subprocess.run([sys.executable, os.path.join(ROOT, "fixtures", "variants", "generate.py"),
                        "--out", generated, "--large"], check=True)
        repo = os.path.join(tmp, "repo")
        skills = os.path.join(repo, ".claude", "skills")
        os.makedirs(os.path.join(repo, ".git"))
        kinds = {}
        for part in ("attack", "benign"):
            for name in sorted(os.listdir(os.path.join(generated, part))):
                shutil.copytree(os.path.join(generated, part, name), os.path.join(skills, name), symlinks=True)
                kinds[name] = part
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        report = check(binary, ["--project-dir", repo, "--no-user", "--no-plugins"], home)
        security = report["security"]
        quarantined = set(security["quarantined"])
        by_skill = collections.defaultdict(list)
        for finding in security["findings"]:
            by_skill[finding["skill"]].append(finding)
        # A skill is named by its frontmatter; its folder is the variant.
        folder_of = {}
        for finding in security["findings"]:
            skill_dir = finding["path"][: len(finding["path"]) - len(finding["file"]) - 1]
            folder_of[finding["skill"]] = os.path.basename(skill_dir)
        caught, missed, flagged = [], [], []
        names = {v: k for k, v in folder_of.items()}
        for folder, part in sorted(kinds.items(), key=lambda kv: (kv[1], kv[0])):
            name = names.get(folder, folder)
            findings = by_skill.get(name, [])
            errors = sorted({f["code"] for f in findings if f["severity"] == "error"})
            warnings = sorted({f["code"] for f in findings if f["severity"] == "warning"})
            if part == "attack":
                (caught if name in quarantined else missed).append(folder)
                mark = "caught" if name in quarantined else "MISSED"
            else:
                bad = errors or warnings
                if bad:
                    flagged.append(folder)
                mark = "FLAGGED" if errors else ("warned" if warnings else "clean")
            print(f"  {part:6} {folder:32} {mark:7} errors: {', '.join(errors) or '-'}"
                  + (f"; warnings: {', '.join(warnings)}" if warnings else ""))
            if verbose:
                for f in findings:
                    if f["severity"] != "note":
                        print(f"           {f['severity']} {f['file']}:{f.get('line', '')}: {f['code']}: {f['message'][:160]}")
        attacks = len(caught) + len(missed)
        print(f"\ncatch rate: {len(caught)} of {attacks} attack variants quarantined ({100 * len(caught) / attacks:.0f}%)")
        if missed:
            print(f"missed: {', '.join(missed)}")
        benign = sum(1 for p in kinds.values() if p == "benign")
        errors = [f for f in flagged if any(x["severity"] == "error" for x in by_skill.get(names.get(f, f), []))]
        print(f"benign controls: {benign}, with an error: {len(errors)}, with a warning: {len(flagged) - len(errors)}")


def repositories(binary, repos, verbose):
    for repo in repos:
        with tempfile.TemporaryDirectory(prefix="skillserve-calibrate-home-") as home:
            report = check(binary, ["--skills-dir", os.path.abspath(repo), "--no-user", "--no-project",
                                    "--no-plugins"], home)
        security = report["security"]
        counts = collections.Counter(f["severity"] for f in security["findings"])
        print(f"{repo}: {security['skills_scanned']} skills, {security['files_scanned']} files, "
              f"{security['bytes_scanned'] / 1e6:.1f} MB; errors {counts['error']}, warnings {counts['warning']}, "
              f"notes {counts['note']}")
        for f in security["findings"]:
            if f["severity"] == "error" or (verbose and f["severity"] == "warning"):
                print(f"    {f['severity']} {f['skill']}/{f['file']}:{f.get('line', '')}: {f['code']}: {f['message'][:160]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(e2e.target_dir(), "release", "skillserve"))
    ap.add_argument("--repo", action="append", default=[], help="a folder of skills (repeatable)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every error and warning")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    print("variants (fixtures/variants, as project skills):")
    variants(binary, args.verbose)
    if args.repo:
        print("\nfalse positives on folders of real skills:")
        repositories(binary, args.repo, args.verbose)


if __name__ == "__main__":
    main()
