#!/usr/bin/env python3
"""Checks share/nkicc's JSON Schemas against every description and registry in the repository.

Usage: check_schemas.py NKICC REPO [--invalid DIR] [--extra FILE.json]...

Every kernel description and registry.json found in the repository (the bundled examples and
registry, JSON files under test/, and the files of every split-file section of the lit tests) is
given to nkicc; each one nkicc accepts must be valid under its schema, since the schemas promise
to be no stricter than nkicc. With --invalid, every JSON file in DIR must be rejected by both the
schema and nkicc (the schema is not vacuous). Needs Debian's python3-jsonschema.
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import jsonschema

PROBE = "__nkicc_schema_probe__"
MARKER = re.compile(r"^(?:#|//)--- (\S.*)$")


def split_file(test):
    """The (name, text) sections of a lit test written for split-file."""
    sections, name, lines = [], None, []
    for line in test.read_text(encoding="utf-8", errors="surrogateescape").splitlines(keepends=True):
        m = MARKER.match(line.rstrip("\n"))
        if m:
            if name:
                sections.append((name, "".join(lines)))
            name, lines = m.group(1).strip(), []
        elif name:
            lines.append(line)
    if name:
        sections.append((name, "".join(lines)))
    return sections


def kind_of(path):
    """'description', 'registry' or None, from the file's JSON."""
    try:
        doc = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict):
        return None
    if "nkicc_registry" in doc or pathlib.Path(path).name == "registry.json":
        return "registry"
    if "nkicc" in doc or "calls" in doc:
        return "description"
    return None


def env():
    e = dict(os.environ)
    e.pop("NEURON_PLATFORM_TARGET_OVERRIDE", None)
    e["NKICC_DMI_PRODUCT_NAME"] = "/nonexistent/nkicc-schema-check/product_name"
    return e


def nkicc_accepts_description(nkicc, path):
    r = subprocess.run([nkicc, "trace", str(path), "--emit=manifest", "-o", os.devnull], capture_output=True,
                       text=True, env=env(), timeout=60)
    return r.returncode == 0


def nkicc_accepts_registry(nkicc, path, scratch):
    """Loads the registry's folder with -I through a call of a kernel no registry has: the run must
    fail on that call alone."""
    probe = pathlib.Path(scratch) / "probe.json"
    probe.write_text(json.dumps({"nkicc": 1, "target": "trn2", "calls": [{"internal": PROBE}]}))
    r = subprocess.run([nkicc, "trace", str(probe), "-I", str(pathlib.Path(path).parent), "--emit=ir", "-o",
                        os.devnull], capture_output=True, text=True, env=env(), timeout=60)
    errors = [line for line in r.stderr.splitlines() if ": error: " in line]
    return r.returncode == 1 and len(errors) == 1 and PROBE in errors[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("nkicc")
    ap.add_argument("repo")
    ap.add_argument("--invalid", help="a folder of JSON files that both the schema and nkicc must reject")
    ap.add_argument("--extra", action="append", default=[], help="another description to check (a generated one)")
    a = ap.parse_args()
    repo = pathlib.Path(a.repo)
    schemas = {}
    for kind in ("description", "registry"):
        schema = json.loads((repo / "share/nkicc" / f"{kind}.schema.json").read_text(encoding="utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        schemas[kind] = jsonschema.Draft202012Validator(schema)

    failures = []
    counts = {"description": [0, 0], "registry": [0, 0]}  # [accepted and valid, rejected by nkicc]
    with tempfile.TemporaryDirectory() as scratch:
        candidates = []
        for path in sorted((repo / "share/nkicc").rglob("*.json")) + sorted((repo / "test").rglob("*.json")):
            if not path.name.endswith(".schema.json"):
                candidates.append((str(path.relative_to(repo)), path))
        candidates += [(p, pathlib.Path(p)) for p in a.extra]
        # The sections of each lit test are written out together, so that relative paths resolve.
        for n, test in enumerate(sorted((repo / "test/lit").rglob("*.test"))):
            sections = split_file(test)
            if not any(name.endswith(".json") for name, _ in sections):
                continue
            folder = pathlib.Path(scratch) / f"t{n}"
            for name, text in sections:
                target = folder / name
                if ".." in pathlib.Path(name).parts:
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8", errors="surrogateescape")
            for name, _ in sections:
                if name.endswith(".json"):
                    candidates.append((f"{test.relative_to(repo)}:{name}", folder / name))
        probe_dir = pathlib.Path(scratch) / "probe"
        probe_dir.mkdir()
        for shown, path in candidates:
            kind = kind_of(path)
            if kind is None:
                continue
            accepted = (nkicc_accepts_description(a.nkicc, path) if kind == "description" else
                        nkicc_accepts_registry(a.nkicc, path, probe_dir))
            if not accepted:
                counts[kind][1] += 1
                continue
            doc = json.loads(path.read_text(encoding="utf-8"))
            errors = sorted(schemas[kind].iter_errors(doc), key=lambda e: list(e.path))
            if errors:
                failures.append(f"{shown}: nkicc accepts this {kind}, the schema does not: "
                                f"{errors[0].message} at /{'/'.join(map(str, errors[0].path))}")
            else:
                counts[kind][0] += 1

        invalid = 0
        if a.invalid:
            for path in sorted(pathlib.Path(a.invalid).rglob("*.json")):
                kind = kind_of(path) or "description"
                doc = json.loads(path.read_text(encoding="utf-8"))
                if schemas[kind].is_valid(doc):
                    failures.append(f"{path.name}: the {kind} schema accepts what it must reject")
                accepted = (nkicc_accepts_description(a.nkicc, path) if kind == "description" else
                            nkicc_accepts_registry(a.nkicc, path, probe_dir))
                if accepted:
                    failures.append(f"{path.name}: nkicc accepts what the test says is invalid")
                invalid += 1

    for f in failures:
        print(f)
    plural = {"description": "descriptions", "registry": "registries"}
    for kind, (valid, rejected) in counts.items():
        print(f"{plural[kind]} accepted by nkicc and valid under the schema: {valid} (rejected by nkicc: {rejected})")
    if a.invalid:
        print(f"invalid files rejected by both: {invalid - len(failures)} of {invalid}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
