#!/usr/bin/env python3
"""Traces a table of calls of real public NKI kernels with nkicc and checks each call's MAC count.

    conformance.py --nkicc build/bin/nkicc --repo aws-neuron/nki-samples=DIR
                   --repo aws-neuron/aws-neuron-sdk=DIR [--table FILE] [--filter SUBSTR]...
                   [--timeout S] [-j N] [-v] [--json FILE] [--work DIR]
    conformance.py --check-table [--table FILE]

The table (test/conformance/kernels.json, described in test/conformance/README.md) names, per call,
a repository, a commit, a kernel file, the kernel and its arguments, and the `matmul_mac_count` the
call must have. The project keeps no code of those repositories: DIR is a local checkout or a bare
git directory of each, and every file is read at the table's commit with `git archive`, extracted
unchanged into a temporary folder that keeps the repository's layout (so imports between kernel
files resolve as they do in the repository).

For each call the script writes a description file beside the kernel file (its only source is the
kernel file; one call), runs `nkicc trace --emit=ir` on it and reads the kernel's
`matmul_mac_count` line. A call passes when nkicc exits 0 and the count is the table's. Each
failure prints one line with its first error (paths relative to the repository), then comes
`conformance: N/M`, the failures per class and the most frequent causes. A call with `"mode":
"simulation"` is of a kernel its file runs only through NKI's simulator (`@nki.jit(mode="simulation")`
or `nki.simulate_kernel(kernel, ...)`; its outputs may be `nl.hbm`): it runs `nkicc simulate -v --random-inputs` instead and reads the MAC
count from the simulated call's log line. A call with `"internal": {"results": [...], "modules": [...]}`
is of a kernel the framework calls as an internal op (its outputs may be private HBM): the script
writes a one-entry registry.json (tensor args as operands, kwargs as attrs) and traces an internal
call with `-I` the kernel file's folder, then the registry's. Classes:

  python       a Python-level gap: an unsupported construct, a builtin or standard-library name,
               a class, an import between files, host NumPy on plain values, a Python exception
  nki          an NKI-level gap: an NKI error id, a missing or misused nl/nisa/nki name, par_dim
  mac          traced, but with another matmul_mac_count than the table's
  description  nkicc does not accept the call's description
  limit        the step budget, --max-instructions or the per-call timeout
  crash        nkicc ended with an internal error (exit 70) or a signal
  runner       the script could not prepare the call (missing commit or file)

Output is in table order whatever -j is, and names no temporary path. Exit status: 0 when every
call passed, 1 when some failed, 2 for a usage or table error. Standard library only.

--simulate (issue 13) also runs `nkicc simulate --random-inputs=SEED` on every call that traces and
has a `reference`, evaluates the reference (a NumPy lambda over the call's arguments, tensors as the
inputs nkicc wrote) and compares each output, within a tolerance scaled by the largest reference
magnitude: that of the least precise float dtype among the output and the kernel's tiles (a kernel
that computes in bfloat16 carries bfloat16's error into a float32 output): float32 1e-4, float16
2e-3, bfloat16 2e-2, float8 0.125; integer outputs exactly. It
prints `SIMFAIL` lines, then `simulate: N/M match` with the failures per class (simulate: nkicc
simulate failed; reference: the lambda raised; mismatch: an output differs). It needs NumPy
(/usr/bin/python3 with python3-numpy); the exit status stays the tracing one.
"""
import argparse
import ast
import concurrent.futures
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TABLE = os.path.join(os.path.dirname(SCRIPT_DIR), "test", "conformance", "kernels.json")
TABLE_FORMAT = 1
REPOSITORIES = ("aws-neuron/nki-samples", "aws-neuron/aws-neuron-sdk")
CALL_FIELDS = {
    "id": str, "repository": str, "commit": str, "path": str, "kernel": str, "args": list, "kwargs": dict,
    "grid": list, "nc": int, "target": str, "opts": dict, "mac_formula": str, "mac_vars": dict,
    "matmul_mac_count": int, "reference": str, "note": str, "mode": str, "internal": dict, "random_range": dict,
}
MODES = ("simulation",)
REQUIRED_FIELDS = ("id", "repository", "commit", "path", "kernel", "args", "matmul_mac_count", "mac_formula")
CLASSES = ("python", "nki", "mac", "description", "limit", "crash", "runner")
DIAG_RE = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.*?)(?: \[(?P<id>[^\]]+)\])?$")
PLAIN_ERROR_RE = re.compile(r"^(?:nkicc: )?error: (?P<msg>.*?)(?: \[(?P<id>[^\]]+)\])?$")
MAC_RE = re.compile(r"^\s*matmul_mac_count: (\d+)\s*$")
# nkicc simulate -v's line per call: "simulate: call 0 ('k'): N instructions x M instances,
# matmul_mac_count C; inputs: a, b; outputs: c float32[128, 512], d int32[128, 1]" ("none" when empty).
SIM_LOG_RE = re.compile(r"simulate: call 0 \('[^']*'\): .*, matmul_mac_count (\d+); inputs: (.*); outputs: (.*)$")
SIM_OUTPUT_RE = re.compile(r"^(\S+) ([a-z0-9_]+)\[")
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")


def simulated_in_file(kernel, text):
    """Whether the kernel file runs `kernel` only through NKI's simulator: its decorator says
    `mode="simulation"`, or the file calls `simulate_kernel(kernel, ...)`."""
    decorated = re.search(r"^@(?:nki\.)?jit\([^)]*\bmode\s*=\s*[\"']simulation[\"'][^)]*\)\s*\ndef\s+"
                          + re.escape(kernel) + r"\(", text, re.M)
    return bool(decorated or re.search(r"\bsimulate_kernel\(\s*" + re.escape(kernel) + r"\b", text))


class TableError(Exception):
    pass


# --- the table ------------------------------------------------------------------------------------

def load_table(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise TableError(f"{path}: cannot read the table: {e.strerror}")

    def no_duplicates(pairs):
        seen = {}
        for k, v in pairs:
            if k in seen:
                raise TableError(f"{path}: duplicate key '{k}'")
            seen[k] = v
        return seen

    try:
        table = json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as e:
        raise TableError(f"{path}:{e.lineno}:{e.colno}: {e.msg}")
    check_table(table, path)
    return table


def check_table(table, path):
    if not isinstance(table, dict) or table.get("format") != TABLE_FORMAT:
        raise TableError(f"{path}: the table must be an object with \"format\": {TABLE_FORMAT}")
    calls = table.get("calls")
    if not isinstance(calls, list) or not calls:
        raise TableError(f"{path}: \"calls\" must be a non-empty list")
    ids = set()
    for i, call in enumerate(calls):
        where = f"{path}: calls[{i}]"
        if not isinstance(call, dict):
            raise TableError(f"{where}: a call is an object")
        for name in REQUIRED_FIELDS:
            if name not in call:
                raise TableError(f"{where}: missing field '{name}'")
        for name, value in call.items():
            if name not in CALL_FIELDS:
                raise TableError(f"{where}: unknown field '{name}' (accepted: {', '.join(CALL_FIELDS)})")
            want = CALL_FIELDS[name]
            if not isinstance(value, want) or (want is int and isinstance(value, bool)):
                raise TableError(f"{where}: field '{name}' must be a {want.__name__}")
        where = f"{path}: call '{call['id']}'"
        if call["id"] in ids:
            raise TableError(f"{where}: duplicate id")
        ids.add(call["id"])
        if call["repository"] not in REPOSITORIES:
            raise TableError(f"{where}: unknown repository '{call['repository']}' (known: {', '.join(REPOSITORIES)})")
        if not re.fullmatch(r"[0-9a-f]{40}", call["commit"]):
            raise TableError(f"{where}: commit must be a full 40-digit SHA")
        if call["path"].startswith("/") or ".." in call["path"].split("/") or not call["path"].endswith(".py"):
            raise TableError(f"{where}: path must be a relative path of a .py file inside the repository")
        if "mode" in call and call["mode"] not in MODES:
            raise TableError(f"{where}: mode must be one of {', '.join(MODES)}")
        internal = call.get("internal")
        if internal is not None:
            if set(internal) - {"modules", "results"} or not isinstance(internal.get("results"), list) or not all(
                    isinstance(r, dict) and set(r) == {"shape", "dtype"} for r in internal["results"]) or not all(
                    isinstance(m, str) and m.endswith(".py") for m in internal.get("modules", [])):
                raise TableError(f"{where}: internal is {{\"results\": [{{\"shape\": ..., \"dtype\": ...}}, ...], "
                                 f"\"modules\": [\"file.py\", ...]}}")
            if "mode" in call or "grid" in call or "reference" in call or not all(
                    isinstance(a, dict) and "shape" in a for a in call["args"]):
                raise TableError(f"{where}: an internal call takes tensor args only, and no mode, grid or reference")
        ranges = call.get("random_range")
        if ranges is not None:
            number = (int, float)
            if not ranges or not all(
                    re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) and isinstance(v, list) and len(v) == 2 and all(
                        isinstance(b, number) and not isinstance(b, bool) for b in v) and v[0] < v[1]
                    for k, v in ranges.items()):
                raise TableError(f"{where}: random_range is {{\"PARAMETER\": [LOW, HIGH], ...}} with LOW < HIGH")
            if "reference" not in call and call.get("mode") != "simulation":
                raise TableError(f"{where}: random_range applies to a simulated call: it needs a reference or "
                                 f"mode simulation")
        if call["matmul_mac_count"] < 0:
            raise TableError(f"{where}: matmul_mac_count must not be negative")
        grid = call.get("grid")
        if grid is not None and not (1 <= len(grid) <= 3 and all(isinstance(g, int) and g > 0 for g in grid)):
            raise TableError(f"{where}: grid must be a list of 1 to 3 positive ints")
        if "nc" in call and not grid:
            raise TableError(f"{where}: nc needs a grid")
        try:
            macs = mac_value(call["mac_formula"], call.get("mac_vars", {}))
        except ValueError as e:
            raise TableError(f"{where}: mac_formula: {e}")
        if macs != call["matmul_mac_count"]:
            raise TableError(f"{where}: mac_formula {call['mac_formula']} gives {macs}, not matmul_mac_count "
                             f"{call['matmul_mac_count']}")


def mac_value(formula, variables):
    """The value of a MAC formula: integers, the names of `variables`, + - * // ** and parentheses."""
    try:
        tree = ast.parse(formula, mode="eval")
    except SyntaxError:
        raise ValueError(f"'{formula}' is not an arithmetic expression")
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.FloorDiv: lambda a, b: a // b, ast.Pow: lambda a, b: a ** b}

    def value(node):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            v = variables.get(node.id)
            if type(v) is not int:
                raise ValueError(f"'{node.id}' is not an integer of mac_vars")
            return v
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            return ops[type(node.op)](value(node.left), value(node.right))
        raise ValueError(f"'{formula}' may only use integers, mac_vars names, + - * // ** and parentheses")

    unused = set(variables) - {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    if unused:
        raise ValueError(f"mac_vars {', '.join(sorted(unused))} not used in '{formula}'")
    return value(tree.body)


# --- the repositories -----------------------------------------------------------------------------

def git(repo_dir, *args, binary=False):
    out = subprocess.run(["git", "-C", repo_dir, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if out.returncode != 0:
        return None
    return out.stdout if binary else out.stdout.decode("utf-8", "replace")


class Checkouts:
    """Extracts each (repository, commit) once, unchanged, keeping the repository's layout."""

    def __init__(self, repos, work_dir):
        self.repos = repos
        self.work_dir = work_dir
        self.trees = {}

    def tree(self, repository, commit, top_dirs):
        key = (repository, commit)
        if key in self.trees:
            return self.trees[key]
        repo_dir = self.repos.get(repository)
        result = None
        if repo_dir is None:
            result = (None, f"no --repo {repository}=DIR given")
        elif git(repo_dir, "cat-file", "-e", commit + "^{commit}") is None:
            result = (None, f"commit {commit[:12]} is not in {repository} ({repo_dir})")
        else:
            root = os.path.join(self.work_dir, repository.replace("/", "+") + "@" + commit[:12])
            os.makedirs(root, exist_ok=True)
            # Only the top-level folders the table's files live in: the SDK's other folders are large.
            present = [d for d in sorted(top_dirs) if git(repo_dir, "cat-file", "-e", f"{commit}:{d}") is not None]
            data = git(repo_dir, "archive", "--format=tar", commit, "--", *present, binary=True) if present else b""
            if data is None:
                result = (None, f"git archive of {repository} at {commit[:12]} failed")
            else:
                if data:
                    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                        if hasattr(tarfile, "data_filter"):
                            tar.extractall(root, filter="data")
                        else:
                            tar.extractall(root)
                result = (root, None)
        self.trees[key] = result
        return result


# --- running one call -----------------------------------------------------------------------------

def description(call):
    if "internal" in call:
        # The kernel as an internal op: its tensors are the operands, its kwargs the attrs.
        entry = {"internal": call["kernel"], "operands": call["args"], "results": call["internal"]["results"]}
        if call.get("kwargs"):
            entry["attrs"] = call["kwargs"]
        return {"nkicc": 1, "target": call.get("target", "trn2"), "calls": [entry]}
    entry = {"kernel": call["kernel"], "args": call["args"]}
    if call.get("kwargs"):
        entry["kwargs"] = call["kwargs"]
    if call.get("grid"):
        entry["grid"] = call["grid"]
    if call.get("nc"):
        entry["nc"] = call["nc"]
    if call.get("opts"):
        entry["opts"] = call["opts"]
    return {
        "nkicc": 1,
        "name": re.sub(r"[^A-Za-z0-9_]", "_", call["kernel"]),
        "target": call.get("target", "trn2"),
        "sources": [{"path": os.path.basename(call["path"])}],
        "calls": [entry],
    }


def relative_path(path, cwd, root):
    full = os.path.normpath(os.path.join(cwd, path))
    rel = os.path.relpath(full, root)
    return path if rel.startswith("..") else rel


def first_error(stderr, cwd, root):
    """The first `error:` line of nkicc's stderr, its path relative to the repository."""
    for raw in stderr.splitlines():
        line = ANSI_RE.sub("", raw).rstrip()
        m = DIAG_RE.match(line)
        if m:
            path = relative_path(m["path"], cwd, root)
            text = f"{path}:{m['line']}:{m['col']}: error: {m['msg']}" + (f" [{m['id']}]" if m["id"] else "")
            return text, m["msg"], m["id"] or "", path
        m = PLAIN_ERROR_RE.match(line)
        if m:
            return line, m["msg"], m["id"] or "", ""
    lines = [ANSI_RE.sub("", l).strip() for l in stderr.splitlines() if l.strip()]
    text = lines[0] if lines else "no diagnostic on stderr"
    return text, text, "", ""


def run_call(index, call, checkouts, nkicc, timeout, top_dirs, np=None):
    result = {"id": call["id"], "expected": call["matmul_mac_count"], "mac": None}
    root, problem = checkouts.tree(call["repository"], call["commit"], top_dirs[(call["repository"], call["commit"])])
    kernel_file = os.path.join(root, call["path"]) if root else None
    if root and not os.path.isfile(kernel_file):
        problem = f"{call['path']} does not exist at {call['commit'][:12]}"
    if problem:
        return dict(result, status="fail", cls="runner", error=problem, cause=problem, detail="")
    cwd = os.path.dirname(kernel_file)
    desc_name = f".nkicc-conformance-{index:04d}.json"
    with open(os.path.join(cwd, desc_name), "w", encoding="utf-8") as f:
        json.dump(description(call), f, indent=1)
        f.write("\n")
    registry = []
    if "internal" in call and os.path.exists(os.path.join(cwd, "registry.json")):
        msg = f"{os.path.dirname(call['path']) or '.'} has a registry.json of its own: an internal call needs a folder without"
        return dict(result, status="fail", cls="runner", error=msg, cause=msg, detail="")
    if "internal" in call:
        # A registry of one entry, in a folder of the call's own, so that calls run in parallel;
        # its files are found in the kernel file's folder, the first -I (it has no registry.json).
        reg_dir = desc_name + ".registry"
        os.makedirs(os.path.join(cwd, reg_dir), exist_ok=True)
        entry = {"source": os.path.basename(call["path"]), "entry": call["kernel"],
                 "args": [{"operand": i} for i in range(len(call["args"]))],
                 "results": len(call["internal"]["results"])}
        if call["internal"].get("modules"):
            entry["modules"] = call["internal"]["modules"]
        if call.get("kwargs"):
            entry["kwargs"] = {k: {"attr": k} for k in call["kwargs"]}
        with open(os.path.join(cwd, reg_dir, "registry.json"), "w", encoding="utf-8") as f:
            json.dump({"nkicc_registry": 1, "kernels": {call["kernel"]: entry}}, f, indent=1)
        registry = ["-I", ".", "-I", reg_dir]
    simulation = call.get("mode") == "simulation"
    if simulation:
        # A kernel NKI runs only through nki.simulate_kernel (its outputs may be nl.hbm): it is
        # simulated, and its MAC count comes from nkicc's log of the simulated call.
        if not simulated_in_file(call["kernel"], open(kernel_file, encoding="utf-8").read()):
            msg = (f"the table says mode simulation, but {call['path']} neither decorates {call['kernel']} "
                   f"@nki.jit(mode=\"simulation\") nor calls simulate_kernel({call['kernel']}, ...)")
            return dict(result, status="fail", cls="runner", error=msg, cause=msg, detail="")
        out_dir = os.path.join(cwd, desc_name + ".sim")
        shutil.rmtree(out_dir, ignore_errors=True)
        cmd = [nkicc, "simulate", "-v", "--color=never", desc_name, f"--random-inputs={SIM_SEED}",
               *random_range_options(call), "-o", out_dir]
    else:
        cmd = [nkicc, "trace", "--emit=ir", "--color=never", *registry, desc_name]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        result["seconds"] = round(time.monotonic() - start, 3)
        msg = f"timeout: no result after {timeout:g} s"
        return dict(result, status="fail", cls="limit", error=msg, cause="timeout", detail="")
    result["seconds"] = round(time.monotonic() - start, 3)
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode == 0:
        if simulation:
            logs = [m for m in map(SIM_LOG_RE.search, stderr.splitlines()) if m]
            macs = [int(m.group(1)) for m in logs]
        else:
            macs = [int(m.group(1)) for m in map(MAC_RE.match, proc.stdout.decode("utf-8", "replace").splitlines())
                    if m]
        if len(macs) != 1:
            where = "nkicc simulate -v's log" if simulation else "--emit=ir"
            msg = f"expected one matmul_mac_count line in {where}, found {len(macs)}"
            return dict(result, status="fail", cls="runner", error=msg, cause=msg, detail="")
        result["mac"] = macs[0]
        if np is not None and call.get("reference"):
            if simulation:
                result["simulate"] = check_reference(np, call, out_dir, *simulated_names(logs[0]))
            else:
                result["simulate"] = simulate_call(np, call, cwd, desc_name, nkicc, timeout)
        if macs[0] == call["matmul_mac_count"]:
            return dict(result, status="pass")
        msg = f"matmul_mac_count {macs[0]}, expected {call['matmul_mac_count']} ({call['mac_formula']})"
        return dict(result, status="fail", cls="mac", error=msg, cause="wrong matmul_mac_count", detail="")
    detail = "\n".join(ANSI_RE.sub("", l) for l in stderr.splitlines())
    if proc.returncode < 0 or proc.returncode == 70:
        text, _, _, _ = first_error(stderr, cwd, root)
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else "internal error (exit 70)"
        return dict(result, status="fail", cls="crash", error=f"{how}: {text}", cause=how, detail=detail)
    text, msg, diag_id, path = first_error(stderr, cwd, root)
    in_description = os.path.basename(path).startswith(".nkicc-conformance")
    if in_description:
        text = text.replace(path, "<description>", 1)
    cls, cause = classify(msg, diag_id, in_description)
    return dict(result, status="fail", cls=cls, error=text, cause=cause, detail=detail)


# --- simulating a call and checking it against its reference (--simulate) -------------------------

SIM_SEED = 1
SIM_CLASSES = ("simulate", "reference", "mismatch")
SIM_TOLERANCE = {"float32": 1e-4, "tfloat32": 1e-3, "float16": 2e-3, "bfloat16": 2e-2, "float8_e4m3": 0.125,
                 "float8_e4m3fn": 0.125, "float8_e5m2": 0.25}
NAMES_RE = re.compile(r"^\s*(inputs|outputs):(.*)$")
TENSOR_RE = re.compile(r"^\s*%\d+ (\S+) (input|output|internal) \S+ ([a-z0-9_]+)\[")


def sim_load(np, path, dtype):
    """A .npy file nkicc wrote, as NumPy sees it: bfloat16 and float8 bits decoded to float32."""
    a = np.load(path)
    if dtype == "bfloat16":
        return (a.view("<u2").astype("<u4") << 16).view("<f4")
    if dtype.startswith("float8"):
        e_bits, bias, has_inf = {"float8_e4m3": (4, 7, True), "float8_e4m3fn": (4, 7, False),
                                 "float8_e5m2": (5, 15, True)}[dtype]
        b = a.view("u1").astype(np.int64)
        m_bits = 7 - e_bits
        e, m = (b >> m_bits) & ((1 << e_bits) - 1), b & ((1 << m_bits) - 1)
        v = np.where(e == 0, m / (1 << m_bits) * 2.0 ** (1 - bias), (1 + m / (1 << m_bits)) * np.exp2(e - bias))
        top = (1 << e_bits) - 1
        nan = (e == top) & ((m != 0) if has_inf else (m == (1 << m_bits) - 1))
        v = np.where(nan, np.nan, np.where((e == top) & (m == 0) & has_inf, np.inf, v))
        return (np.where(b & 0x80, -v, v)).astype(np.float32)
    return a


def sim_constant(value):
    if isinstance(value, dict) and "tuple" in value:
        return tuple(sim_constant(v) for v in value["tuple"])
    if isinstance(value, list):
        return [sim_constant(v) for v in value]
    return value


def random_range_options(call):
    """nkicc simulate's --random-range for each of the table's ranges (index inputs that must lie
    within the tensor they index)."""
    return [f"--random-range={name}={low}:{high}" for name, (low, high) in call.get("random_range", {}).items()]


def simulate_call(np, call, cwd, desc_name, nkicc, timeout):
    """Simulates one traced call and compares its outputs with the table's reference."""
    out_dir = os.path.join(cwd, desc_name + ".sim")
    shutil.rmtree(out_dir, ignore_errors=True)
    try:
        text = subprocess.run([nkicc, "trace", "--emit=bir-text", "--color=never", desc_name], cwd=cwd,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        proc = subprocess.run([nkicc, "simulate", "--color=never", desc_name, f"--random-inputs={SIM_SEED}",
                               *random_range_options(call), "-o", out_dir], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "fail", "cls": "simulate", "error": f"timeout: no result after {timeout:g} s"}
    if proc.returncode != 0 or text.returncode != 0:
        stderr = proc.stderr.decode("utf-8", "replace")
        lines = [ANSI_RE.sub("", l) for l in stderr.splitlines() if " error: " in l or l.startswith("error")]
        return {"status": "fail", "cls": "simulate",
                "error": f"exit {proc.returncode}: " + (lines[0] if lines else "no diagnostic")}
    names, dtypes, kernel_tol = {}, {}, 0.0
    for line in text.stdout.decode("utf-8", "replace").splitlines():
        m = NAMES_RE.match(line)
        if m and m.group(1) not in names:
            names[m.group(1)] = [n.strip() for n in m.group(2).split(",") if n.strip()]
        m = TENSOR_RE.match(line)
        if m:
            dtypes.setdefault(m.group(1), m.group(3))
            kernel_tol = max(kernel_tol, SIM_TOLERANCE.get(m.group(3), 0.0))
    return check_reference(np, call, out_dir, names, dtypes, kernel_tol)


def simulated_names(log):
    """Input and output names, output dtypes, from nkicc simulate -v's line of a call."""
    names = {"inputs": [] if log.group(2) == "none" else [n.strip() for n in log.group(2).split(",")], "outputs": []}
    dtypes = {}
    for item in [] if log.group(3) == "none" else log.group(3).split("], "):
        m = SIM_OUTPUT_RE.match(item.strip())
        names["outputs"].append(m.group(1))
        dtypes[m.group(1)] = m.group(2)
    # Without the kernel's tiles (the trace is not run), the outputs' own dtypes set the tolerance.
    return names, dtypes, 0.0


def check_reference(np, call, out_dir, names, dtypes, kernel_tol):
    """Compares the simulated outputs in out_dir with the table's reference on the same inputs."""
    inputs = iter(names.get("inputs", []))
    values = []
    for arg in list(call["args"]) + list(call.get("kwargs", {}).values()):
        if isinstance(arg, dict) and "shape" in arg and "dtype" in arg:
            name = next(inputs)
            values.append(sim_load(np, os.path.join(out_dir, f"call0.{name}.npy"), arg["dtype"]))
        else:
            values.append(sim_constant(arg))
    try:
        with np.errstate(all="ignore"):
            want = eval(call["reference"], {"np": np, "numpy": np})(*values)  # the table's own NumPy lambda
    except Exception as e:
        return {"status": "fail", "cls": "reference", "error": f"the reference raised {type(e).__name__}: {e}"}
    wants = list(want) if isinstance(want, (tuple, list)) else [want]
    outputs = names.get("outputs", [])
    if len(wants) != len(outputs):
        return {"status": "fail", "cls": "mismatch",
                "error": f"the kernel has {len(outputs)} outputs, the reference {len(wants)}"}
    for name, w in zip(outputs, wants):
        dtype = dtypes.get(name, "float32")
        got = sim_load(np, os.path.join(out_dir, f"call0.{name}.npy"), dtype).astype(np.float64)
        w = np.asarray(w, dtype=np.float64)
        if got.shape != w.shape:
            return {"status": "fail", "cls": "mismatch",
                    "error": f"output {name}: shape {list(got.shape)}, the reference's {list(w.shape)}"}
        tol = max(SIM_TOLERANCE[dtype], kernel_tol) if dtype in SIM_TOLERANCE else 0.0
        finite = np.abs(w[np.isfinite(w)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        if tol == 0.0:
            w = np.rint(w)
        ok = np.isclose(got, w, rtol=tol, atol=tol * scale, equal_nan=True)
        if not ok.all():
            bad = np.argwhere(~ok)
            first = tuple(int(i) for i in bad[0])
            return {"status": "fail", "cls": "mismatch",
                    "error": f"output {name} ({dtype}): {len(bad)} of {got.size} elements differ, the first at "
                             f"{list(first)}: {got[first]:.6g} != {w[first]:.6g}"}
    return {"status": "pass"}


# --- classifying a failure ------------------------------------------------------------------------

NKI_MODULE_RE = re.compile(r"\b(neuronxcc\.nki|nki|nl|nisa|ncc|nki\.[a-z_.]+|neuronxcc\.nki\.[a-z_.]+)\b")
NKI_NAME_HINTS = ("par_dim", "nl.", "nisa.", "nki.", "ncc.", "psum", "sbuf", "hbm", "tile", "partition", "mgrid",
                  "arange", "program_id", "affine_range", "sequential_range", "matmul", "dtype")
STDLIB_MODULES = ("math", "numpy", "np", "functools", "itertools", "operator", "collections", "dataclasses",
                  "enum", "typing", "os", "logging", "sys")


def normalize(msg):
    """A message with its sizes, shapes and numbers blanked, so equal causes group together."""
    msg = re.sub(r"\[[0-9, ]+\]", "[..]", msg)
    msg = re.sub(r"\([0-9, ]+\)", "(..)", msg)
    return re.sub(r"\b\d+\b", "N", msg)


def classify(msg, diag_id, in_description):
    """(class, cause) of a failure from its first error message and id."""
    m = re.match(r"unknown kernel '[^']*': no source defines a top-level function", msg)
    if m:
        return "python", "kernel defined by an import from another file"
    if "is no longer a function after the module ran" in msg or re.search(r"\bnki\.jit\(\) takes", msg):
        return "python", "decorator: " + normalize(re.sub(r"'[^']*'", "'..'", msg))
    if in_description or diag_id in ("manifest", "manifest-json"):
        return "description", "description: " + normalize(msg)
    # A placeholder module reached in a kernel: NumPy on host values, an NKI module nkicc lacks, or an
    # import between kernel files that did not resolve.
    m = re.match(r"cannot use '([^']+)' \([^)]*\) in a kernel: module '([^']+)' is not modelled", msg)
    if m:
        name, module = m.groups()
        if module.split(".")[0] in ("neuronxcc", "nki"):
            return "nki", f"not modelled: {name}"
        if module in ("numpy", "np"):
            return "python", f"host NumPy: {name}"
        return "python", f"import between kernel files: module '{module}'"
    m = re.match(r"parameter '[^']*' of '([^']+)' must be a tensor or tile, not '(tuple|list|int|float|bool)'", msg)
    if m:
        return "python", f"host NumPy: {m.group(1)} on a Python {m.group(2)}"
    if diag_id in ("step-budget", "max-instructions"):
        return "limit", diag_id
    if diag_id.startswith("err_") or diag_id.startswith("warn_"):
        return "nki", diag_id
    if diag_id in ("unsupported", "syntax-error"):
        m = re.match(r"unsupported Python construct '([^']*)'", msg)
        if m:
            return "python", "unsupported Python construct '" + m.group(1) + "'"
        # nkicc's other `unsupported` errors speak of NKI values (a tile where a number is needed).
        what = normalize(msg)
        return ("nki" if any(h in msg for h in NKI_NAME_HINTS) else "python"), "unsupported: " + what
    m = re.match(r"module '([^']+)' has no attribute '([^']+)'", msg)
    if m:
        module, name = m.groups()
        short = {"neuronxcc.nki.language": "nl", "nki.language": "nl", "neuronxcc.nki.isa": "nisa",
                 "nki.isa": "nisa", "neuronxcc.nki": "nki", "nki": "nki"}.get(module, module)
        if module.split(".")[0] in ("neuronxcc", "nki"):
            return "nki", f"missing {short}.{name}"
        return "python", f"missing {module}.{name}"
    m = re.match(r"'(tensor|tile|mgrid|index tile|IndexExpr)' object has no attribute '([^']+)'", msg)
    if m:
        return "nki", f"missing {m.group(1)}.{m.group(2)}"
    m = re.search(r"does not model '([^']+)'", msg)
    if m:
        name = m.group(1)
        return ("nki" if re.match(r"(nl|nisa|nki|ncc|neuronxcc)\.", name) else "python"), f"not modelled: {name}"
    m = re.match(r"name '([^']+)' is not defined", msg)
    if m:
        name = m.group(1)
        return ("nki" if name in ("par_dim", "nl", "nisa", "nki") else "python"), f"NameError: {name}"
    if re.search(r"\bpar_dim\b", msg):
        return "nki", "par_dim"
    if diag_id in PYTHON_EXCEPTIONS:
        # A Python exception raised by an NKI call names the NKI function or object.
        if NKI_MODULE_RE.search(msg) or any(h in msg for h in ("tile", "par_dim", "mgrid", "psum", "sbuf")):
            return "nki", f"{diag_id}: {normalize(msg)}"
        return "python", f"{diag_id}: {normalize(msg)}"
    if diag_id:
        return "python" if diag_id[:1].isupper() else "nki", f"[{diag_id}] {normalize(msg)}"
    return "nki" if any(h in msg for h in NKI_NAME_HINTS) else "python", normalize(msg)


PYTHON_EXCEPTIONS = ("AttributeError", "TypeError", "ValueError", "IndexError", "KeyError", "NameError",
                     "ZeroDivisionError", "AssertionError", "ImportError", "ModuleNotFoundError", "RecursionError",
                     "NotImplementedError", "RuntimeError", "OverflowError")


# --- the run --------------------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(description="Trace a table of real public NKI kernel calls with nkicc.")
    p.add_argument("--nkicc", help="the nkicc binary")
    p.add_argument("--repo", action="append", default=[], metavar="NAME=DIR",
                   help="a local checkout or bare git directory of a repository of the table")
    p.add_argument("--table", default=DEFAULT_TABLE, help="the table (default: test/conformance/kernels.json)")
    p.add_argument("--filter", action="append", default=[], metavar="SUBSTR",
                   help="run only the calls whose id contains SUBSTR (repeatable: any of them)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per call (default 60)")
    p.add_argument("-j", "--jobs", type=int, default=1, help="calls traced at once (default 1)")
    p.add_argument("-v", "--verbose", action="store_true", help="a line per call, and each failure's whole diagnostic")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON to FILE ('-' for stdout)")
    p.add_argument("--work", metavar="DIR", help="extract into DIR and keep it (default: a temporary folder)")
    p.add_argument("--check-table", action="store_true", help="only check the table's format")
    p.add_argument("--simulate", action="store_true",
                   help="also simulate each call with a reference and compare its outputs (needs NumPy)")
    return p.parse_args(argv)


def summary_lines(results):
    failures = [r for r in results if r["status"] != "pass"]
    lines = [f"conformance: {len(results) - len(failures)}/{len(results)}"]
    if failures:
        counts = {c: sum(1 for r in failures if r["cls"] == c) for c in CLASSES}
        lines.append("failures by class: " + ", ".join(f"{c} {n}" for c, n in counts.items() if n))
        causes = {}
        for r in failures:
            causes.setdefault((r["cls"], r["cause"]), []).append(r["id"])
        lines.append("causes (calls, class, first error):")
        for (cls, cause), ids in sorted(causes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines.append(f"  {len(ids):4d}  {cls:<11} {cause}")
    return lines


def simulate_lines(results, verbose):
    """--simulate's report: a line per failure (and per match with -v), then the figure."""
    simulated = [r for r in results if "simulate" in r]
    lines = []
    for r in simulated:
        s = r["simulate"]
        if s["status"] == "pass":
            if verbose:
                lines.append(f"SIMPASS {r['id']}")
        else:
            lines.append(f"SIMFAIL {r['id']}: [{s['cls']}] {s['error']}")
    passed = sum(1 for r in simulated if r["simulate"]["status"] == "pass")
    lines.append(f"simulate: {passed}/{len(simulated)} match (calls that trace and have a reference)")
    fails = [r["simulate"] for r in simulated if r["simulate"]["status"] != "pass"]
    if fails:
        lines.append("simulate failures by class: " +
                     ", ".join(f"{c} {n}" for c in SIM_CLASSES if (n := sum(1 for f in fails if f["cls"] == c))))
    return lines


def main(argv):
    args = parse_args(argv)
    try:
        table = load_table(args.table)
    except TableError as e:
        print(f"conformance.py: error: {e}", file=sys.stderr)
        return 2
    if args.check_table:
        print(f"{os.path.basename(args.table)}: {len(table['calls'])} calls, format {TABLE_FORMAT}")
        return 0
    if not args.nkicc:
        print("conformance.py: error: --nkicc is required", file=sys.stderr)
        return 2
    nkicc = os.path.abspath(args.nkicc)
    if not os.access(nkicc, os.X_OK):
        print(f"conformance.py: error: {args.nkicc} is not an executable", file=sys.stderr)
        return 2
    repos = {}
    for spec in args.repo:
        name, sep, path = spec.partition("=")
        if not sep or name not in REPOSITORIES or not os.path.isdir(path):
            print(f"conformance.py: error: --repo takes NAME=DIR with NAME one of {', '.join(REPOSITORIES)} "
                  f"and DIR a folder: '{spec}'", file=sys.stderr)
            return 2
        repos[name] = os.path.abspath(path)
    calls = [c for c in table["calls"] if not args.filter or any(s in c["id"] for s in args.filter)]
    if not calls:
        print("conformance.py: error: no call of the table matches the filter", file=sys.stderr)
        return 2

    np = None
    if args.simulate:
        try:
            import numpy as np
        except ImportError:
            print("conformance.py: error: --simulate needs NumPy (run /usr/bin/python3 with python3-numpy)",
                  file=sys.stderr)
            return 2
    top_dirs = {}
    for c in table["calls"]:
        top_dirs.setdefault((c["repository"], c["commit"]), set()).add(c["path"].split("/")[0])
    work_dir = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="nkicc-conformance-")
    checkouts = Checkouts(repos, work_dir)
    try:
        # Extract up front, one tree at a time, so parallel calls only read.
        for c in calls:
            checkouts.tree(c["repository"], c["commit"], top_dirs[(c["repository"], c["commit"])])
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(run_call, table["calls"].index(c), c, checkouts, nkicc, args.timeout, top_dirs,
                                   np) for c in calls]
            results = [f.result() for f in futures]
    finally:
        if not args.work:
            shutil.rmtree(work_dir, ignore_errors=True)

    for r in results:
        if r["status"] == "pass":
            if args.verbose:
                print(f"PASS {r['id']}")
            continue
        print(f"FAIL {r['id']}: [{r['cls']}] {r['error']}")
        if args.verbose and r["detail"]:
            for line in r["detail"].splitlines():
                print("     | " + line)
    lines = summary_lines(results)
    for line in lines:
        print(line)
    if args.simulate:
        for line in simulate_lines(results, args.verbose):
            print(line)
    if args.json:
        doc = {
            "table": os.path.basename(args.table),
            "total": len(results),
            "passed": sum(1 for r in results if r["status"] == "pass"),
            "classes": {c: sum(1 for r in results if r["status"] != "pass" and r["cls"] == c) for c in CLASSES},
            "results": [{k: v for k, v in r.items() if k != "detail"} for r in results],
        }
        text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            with open(args.json, "w", encoding="utf-8") as f:
                f.write(text)
    return 0 if all(r["status"] == "pass" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
