"""The end-to-end figure of collect-bench.sh for one repository: how many
instances its collection kept, in how long, and whether the dataset was
written.

    python3 report.py REPO START END EXIT_CODE COLLECTION_JSON STDOUT STDERR

START and END are the collection's wall-clock times in seconds;
COLLECTION_JSON is the written dataset's collection.json (missing when
the dataset was not written); STDOUT and STDERR are what collect printed.
A collection that failed at the end (the dataset refused, no release
date) still ran its funnel: what it kept is read from the table collect
printed, and the failure is named, instead of reporting no instances.
"""

import json
import sys


# The columns of collect's table. Their names hold spaces ("test
# files"); the values do not, one per column.
COLUMNS = ("repository", "test files", "passing", "candidates", "traced", "classified", "with P2P", "masked",
           "verified", "kept")


def funnel_row(table, repo):
    """The repository's row of collect's table: column name -> value."""
    header = False
    for line in table.splitlines():
        fields = line.split()
        if fields[:1] == ["repository"] and fields[-1:] == ["kept"]:
            header = True
        elif header and fields[:1] == [repo] and len(fields) == len(COLUMNS):
            return dict(zip(COLUMNS, fields))
    return None


def last_line(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return lines[-1] if lines else "no message"


def report(repo, seconds, code, collection, stdout, stderr):
    lines = []
    written = None
    if collection is not None:
        try:
            written = int(json.loads(collection)["instances"])
        except (ValueError, KeyError, TypeError):
            written = None
    if code == 0 and written is not None:
        lines.append("  %d instances in %.0f s: %.0f instances an hour" % (written, seconds, written * 3600 / seconds))
        return lines
    lines.append("  no dataset written: collect exited %d after %.0f s: %s" % (code, seconds, last_line(stderr)))
    row = funnel_row(stdout, repo)
    if row is None:
        lines.append("  %s has no row in collect's table: nothing was kept" % repo)
    elif row["kept"].isdigit():
        kept = int(row["kept"])
        lines.append("  the funnel kept %d instances (%s verified) in %.0f s: %.0f an hour, had the dataset been written"
                     % (kept, row["verified"], seconds, kept * 3600 / seconds))
    else:
        lines.append("  the funnel kept %s (%s verified)" % (row["kept"], row["verified"]))
    return lines


def main(argv):
    repo, start, end, code, cpath, opath, epath = argv
    try:
        with open(cpath, encoding="utf-8") as f:
            collection = f.read()
    except OSError:
        collection = None
    with open(opath, encoding="utf-8", errors="replace") as f:
        stdout = f.read()
    with open(epath, encoding="utf-8", errors="replace") as f:
        stderr = f.read()
    for line in report(repo, float(end) - float(start), int(code), collection, stdout, stderr):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
