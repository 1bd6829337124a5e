"""How the areas are laid out: total lines, files per area, and the places that name an area.

Run from the repository root: `python benchmarks/layout_metrics.py`. Counted over the kit's
own source (spec/, reference/, backends/, conformance/, features/, robot/, pyproject.toml,
tox.ini), not tests, docs or examples:

- total lines of those files;
- files per area: files whose path names the area (`conformance/breaker/harness.py`,
  `conformance/breaker/harness.py`, `spec/breaker.yaml`, ...);
- places naming an area outside its own files: lines of other files whose code names the
  area (an identifier or a module path such as `breaker_harness`, `BREAKER`,
  `open_breaker`); comments, docstrings and prose files (.md, .feature) do not count. Each
  such line is wiring that must change when an area is added or moved.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

AREAS = ("lifecycle", "retry", "stuck", "reaper", "redelivery", "breaker", "governor",
         "idempotency", "admission", "loops", "reminders", "scheduling", "store")
# The stems an area's own files use (reminders_* and reminder_* both belong to reminders;
# the store area's backends live in backends/task_store, as backends/store is the job store,
# so its "named elsewhere" count includes every use of the job store: read it as an upper
# bound).
STEMS = {"loops": ("loops", "loop"), "reminders": ("reminders", "reminder"),
         "store": ("store", "task_store")}
FOLDERS = ("spec", "reference", "backends", "conformance", "features", "robot")
FILES = ("pyproject.toml", "tox.ini")
SUFFIXES = {".py", ".yaml", ".md", ".feature", ".robot", ".resource", ".toml", ".ini"}


def sources(root: Path) -> list[Path]:
    found = [root / name for name in FILES if (root / name).exists()]
    for folder in FOLDERS:
        found += [path for path in (root / folder).rglob("*")
                  if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts]
    return sorted(found)


def owns(area: str, relative: Path) -> bool:
    """The file is one of the area's own: a folder or a file name names the area."""
    stems = STEMS.get(area, (area,))
    parts = [*relative.parts[:-1], relative.stem]
    return any(part == stem or part.startswith(f"{stem}_") or part.endswith(f"_{stem}")
               for part in parts for stem in stems)


def code_lines(path: Path, text: str) -> list[str]:
    """The code of each line: Python names and strings that are not docstrings; other
    wiring files (.toml, .ini, .robot, .resource, .yaml) line by line; prose not at all."""
    if path.suffix in {".md", ".feature"}:
        return []
    if path.suffix != ".py":
        return [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    lines: dict[int, list[str]] = {}
    previous = tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        docstring = token.type == tokenize.STRING and previous in (
            tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.NL)
        if token.type in (tokenize.NAME, tokenize.STRING) and not docstring:
            lines.setdefault(token.start[0], []).append(token.string)
        if token.type not in (tokenize.COMMENT, tokenize.NL):
            previous = token.type
    return [" ".join(words) for words in lines.values()]


def main() -> None:
    root = Path.cwd()
    files = sources(root)
    texts = {path: path.read_text(encoding="utf-8") for path in files}
    total = sum(text.count("\n") for text in texts.values())
    code = {path: code_lines(path, text) for path, text in texts.items()}
    print(f"source files: {len(files)}, total lines: {total}")
    print(f"{'area':<12} {'own files':>9} {'named elsewhere':>16}")
    for area in AREAS:
        stems = "|".join(STEMS.get(area, (area,)))
        pattern = re.compile(rf"(?<![A-Za-z])({stems})(?![a-z])", re.IGNORECASE)
        own = [path for path in files if owns(area, path.relative_to(root))]
        elsewhere = sum(1 for path in files if path not in own
                        for line in code[path] if pattern.search(line))
        print(f"{area:<12} {len(own):>9} {elsewhere:>16}")


if __name__ == "__main__":
    main()
