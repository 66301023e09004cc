"""Write the dashboards: `python -m grafana.generator` (from the repository root); `--check` only compares.

The committed JSON is what Grafana provisioning loads; the tests fail when it differs from this output, so
the Python source stays the one place dashboards are edited.
"""

from __future__ import annotations

import argparse
import sys

from grafana.generator.render import DASHBOARDS_DIR, rendered


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed JSON is out of date")
    args = parser.parse_args(argv)
    stale = []
    for name, text in rendered().items():
        path = DASHBOARDS_DIR / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path}")
    if stale:
        print(f"out of date: {', '.join(stale)}; run: python -m grafana.generator", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
