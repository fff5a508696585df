#!/usr/bin/env python3
"""Regenerates the fuzz targets' seed corpora (fuzz/corpus/<target>/) from the project's own
test inputs: the files of every lit test (its `#--- name` sections, as split-file writes them),
test/lit/*/Inputs, test/unit/data and the bundled share/nkicc files.

  description     every description file (JSON with an "nkicc" key)
  registry        every registry.json
  python, trace   every Python source (trace: those that define a function)
  bir             the BIR module of each description that traces (`nkicc trace --emit=bir`)
  backend_config  the decoded JSON of each backend_config in `--emit=hlo` of the same

Seeds are named by their SHA-1, as libFuzzer names what it finds, so that regenerating changes
nothing when the tests did not change. Usage:

  /usr/bin/python3 fuzz/gen_corpus.py --nkicc build/bin/nkicc
"""
import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ("description", "registry", "python", "trace", "bir", "backend_config")
# Seeds larger than this slow every mutation down for little coverage.
MAX_SEED_BYTES = 64 * 1024


def split_sections(text):
    """The files split-file would write for one lit test: (name, bytes)."""
    sections, name, lines = [], None, []
    for line in text.splitlines(keepends=True):
        m = re.match(r"^#--- (\S+)\s*$", line)
        if m:
            if name is not None:
                sections.append((name, "".join(lines)))
            name, lines = m.group(1), []
        elif name is not None:
            lines.append(line)
    if name is not None:
        sections.append((name, "".join(lines)))
    return sections


def lit_tests():
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, "test", "lit")):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith(".test"):
                yield os.path.join(dirpath, f)


def plain_files(*patterns):
    for rel, exts in patterns:
        top = os.path.join(ROOT, rel)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(exts):
                    yield os.path.join(dirpath, f)


def is_description(data):
    try:
        return isinstance(json.loads(data), dict) and "nkicc" in json.loads(data)
    except ValueError:
        return False


def add(corpus, target, data):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    if 0 < len(data) <= MAX_SEED_BYTES:
        corpus[target][hashlib.sha1(data).hexdigest()] = data


def outputs(nkicc, folder, description, scratch):
    """The BIR module and the backend_configs of one description, when it traces; the module is
    written into `scratch`, never beside the description."""
    env = dict(os.environ, NKICC_DMI_PRODUCT_NAME="/nonexistent/product_name")
    env.pop("NEURON_PLATFORM_TARGET_OVERRIDE", None)
    out = os.path.join(scratch, "out.bir")
    bir = subprocess.run([nkicc, "trace", "--emit=bir", "-o", out, description],
                         cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    blob = None
    if bir.returncode == 0:
        with open(out, "rb") as f:
            blob = f.read()
    hlo = subprocess.run([nkicc, "trace", "--emit=hlo", description], cwd=folder, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
    configs = []
    if hlo.returncode == 0:
        for b64 in re.findall(rb'backend_config="([A-Za-z0-9+/=]+)"', hlo.stdout):
            configs.append(base64.b64decode(b64))
    return blob, configs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nkicc", required=True, help="the nkicc binary that writes the BIR and HLO seeds")
    parser.add_argument("--out", default=os.path.join(ROOT, "fuzz", "corpus"))
    args = parser.parse_args()
    nkicc = os.path.abspath(args.nkicc)
    corpus = {t: {} for t in TARGETS}

    def python_source(data):
        add(corpus, "python", data)
        if re.search(r"^\s*def ", data, re.M):
            add(corpus, "trace", data)

    with tempfile.TemporaryDirectory() as tmp:
        for n, test in enumerate(lit_tests()):
            with open(test, encoding="utf-8", errors="surrogateescape") as f:
                sections = split_sections(f.read())
            if not sections:
                continue
            folder = os.path.join(tmp, str(n))
            for name, data in sections:
                path = os.path.join(folder, name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(data)
            # The Inputs folder beside a test, for descriptions that name its files.
            inputs = os.path.join(os.path.dirname(test), "Inputs")
            if os.path.isdir(inputs) and not os.path.exists(os.path.join(folder, "Inputs")):
                shutil.copytree(inputs, os.path.join(folder, "Inputs"))
            for name, data in sections:
                if name.endswith(".py"):
                    python_source(data)
                elif os.path.basename(name) == "registry.json":
                    add(corpus, "registry", data)
                elif name.endswith(".json") and is_description(data):
                    add(corpus, "description", data)
                    blob, configs = outputs(nkicc, folder, name, tmp)
                    if blob:
                        add(corpus, "bir", blob)
                    for c in configs:
                        add(corpus, "backend_config", c)
        for path in plain_files(("test/lit", (".py",)), ("test/unit/data", (".py",)),
                                ("share/nkicc/kernels", (".py",)), ("share/nkicc/examples", (".py",))):
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                python_source(f.read())
        for path in plain_files(("share/nkicc", (".json",))):
            with open(path, "rb") as f:
                data = f.read()
            if os.path.basename(path) == "registry.json":
                add(corpus, "registry", data)
            elif is_description(data):
                add(corpus, "description", data)
                blob, configs = outputs(nkicc, os.path.dirname(path), path, tmp)
                if blob:
                    add(corpus, "bir", blob)
                for c in configs:
                    add(corpus, "backend_config", c)

    for target in TARGETS:
        folder = os.path.join(args.out, target)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        for name, data in sorted(corpus[target].items()):
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
        print(f"gen_corpus: {target}: {len(corpus[target])} seeds, "
              f"{sum(len(d) for d in corpus[target].values())} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
