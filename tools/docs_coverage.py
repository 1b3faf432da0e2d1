"""Nothing documented gets lost when the manual moves: every command-line option, SCOREP_*
variable, output file and code span that an earlier README documented must still appear in
README.md or docs/*.md.

    git show 1ee7cd0:README.md > /tmp/old-readme.md
    python3 tools/docs_coverage.py /tmp/old-readme.md

Prints, per kind, how many names the old text has and which of them the current docs lack;
exit status 1 when any is missing (0 otherwise)."""

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# What counts as a documented name of each kind (taken from anywhere in the text, code blocks
# included: an option shown only in an example is documented too).
KINDS = {
    "options": re.compile(r"(?<![\w-])--?[a-zA-Z][\w-]*(?:=[\w:,@.|]+)?"),
    "variables": re.compile(r"\bSCOREP_[A-Z0-9_]+\b"),
    "files": re.compile(r"[\w.{}<>*-]+\.(?:cubex|otf2|def|evt|json|csv|cfg|md|prof|collapsed|"
                        r"lprof|pftrace|perfetto-trace|dot|png|svg|html|filter|spec)\b"),
}
CODE_SPAN = re.compile(r"`([^`\n]+)`")


def names(text):
    found = {kind: set(pattern.findall(text)) for kind, pattern in KINDS.items()}
    # options: the flag itself, without a value and without words such as "-m" in prose that
    # only look like flags ("-o" is an option; "re-executes" is no match: no leading space)
    found["options"] = {o.split("=")[0] for o in found["options"]
                        if o.startswith("--") or re.fullmatch(r"-[a-zA-Z]", o.split("=")[0])}
    found["code spans"] = set(CODE_SPAN.findall(text))
    return found


def docs_text():
    pages = [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))
    return "\n".join(p.read_text() for p in pages)


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: python3 tools/docs_coverage.py OLD_README.md")
    old = names(Path(argv[1]).read_text())
    new_text = docs_text()
    new = names(new_text)
    missing_any = False
    for kind, wanted in old.items():
        # a code span may have been reflowed across lines or had its link target rewritten:
        # it counts as kept when its text occurs anywhere (whitespace-normalised)
        flat = re.sub(r"\s+", " ", new_text)
        missing = sorted(n for n in wanted if n not in new[kind] and re.sub(r"\s+", " ", n) not in flat)
        missing_any |= bool(missing)
        print("%-11s %5d in the old README, %5d missing from README.md + docs/%s"
              % (kind, len(wanted), len(missing), (": " + ", ".join(missing)) if missing else ""))
    return 1 if missing_any else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
