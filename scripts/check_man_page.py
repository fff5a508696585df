#!/usr/bin/env python3
"""Checks that the man page names every option and subcommand nkicc's --help lists.

Usage: check_man_page.py NKICC MAN_PAGE
Reads `nkicc --help` and `nkicc SUBCOMMAND --help` for every subcommand the first lists, and
prints each option (or subcommand) that the man page does not mention; exits 1 if any.
"""
import re
import subprocess
import sys


def help_text(nkicc, *args):
    return subprocess.run([nkicc, *args, "--help"], check=True, capture_output=True, text=True).stdout


def options(text):
    """The spellings in the option lines of a CLI11 help text: `  -I,--kernel-path DIR  ...`."""
    found = []
    for line in text.splitlines():
        m = re.match(r"^  (-[^ ]*)", line)
        if m:
            found.extend(s for s in m.group(1).split(",") if s.startswith("-"))
    return found


def subcommands(text):
    after = text.split("Subcommands:", 1)
    if len(after) < 2:
        return []
    return [m.group(1) for m in re.finditer(r"^  ([a-z][a-z-]*) ", after[1].split("\n\n")[0], re.M)]


def main():
    nkicc, man_path = sys.argv[1], sys.argv[2]
    with open(man_path, encoding="utf-8") as f:
        # roff: `\-` is a hyphen, `\fB` and friends change fonts.
        man = re.sub(r"\\f[BIRP]", "", f.read()).replace("\\-", "-")
    top = help_text(nkicc)
    missing = []
    checked = 0
    for sub in subcommands(top):
        checked += 1
        if not re.search(r"^\.B " + re.escape(sub) + r"$", man, re.M):
            missing.append(f"subcommand {sub}")
        for opt in options(help_text(nkicc, sub)):
            checked += 1
            if not re.search(r"(?<![\w-])" + re.escape(opt) + r"(?![\w-])", man):
                missing.append(f"{sub} {opt}")
    for opt in options(top):
        checked += 1
        if not re.search(r"(?<![\w-])" + re.escape(opt) + r"(?![\w-])", man):
            missing.append(f"nkicc {opt}")
    for m in missing:
        print(f"not in the man page: {m}")
    print(f"checked {checked} names")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
