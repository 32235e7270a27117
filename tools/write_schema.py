"""Write data/SCHEMA.md from kerncast.data.schema (a test fails when the two differ).

    python tools/write_schema.py
"""

from pathlib import Path

from kerncast.data.schema import render_markdown

if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / "data" / "SCHEMA.md"
    target.write_text(render_markdown())
    print(f"wrote {target}")
