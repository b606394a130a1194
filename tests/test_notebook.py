"""examples/quickstart.ipynb runs top to bottom, in a kernel of this interpreter."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")
pytest.importorskip("pandas")

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "quickstart.ipynb"
KERNEL = "flashlab-test"


def this_interpreters_kernel(jupyter_dir: Path) -> None:
    """A kernel spec that starts ``sys.executable``: the notebook then runs the flashlab under
    test, whatever kernels the machine has (a fresh CI machine has none installed)."""
    spec_dir = jupyter_dir / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "flashlab tests",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")


def test_the_quickstart_notebook_runs_top_to_bottom(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jupyter_dir = tmp_path / "jupyter"
    this_interpreters_kernel(jupyter_dir)
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_dir))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    workdir = tmp_path / "work"  # the notebook's sweep cache goes there, not into the repo
    workdir.mkdir()
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        kernel_name=KERNEL,
        timeout=120,
        resources={"metadata": {"path": str(workdir)}},
    )
    client.execute()  # raises CellExecutionError, with the cell and traceback, if a cell fails

    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code)
    outputs = [output for cell in code for output in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 4  # latency CDF, utilisation, WA against OP, sweep lines
    tables = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("flashlab report: pagemap on default" in t for t in tables)
    assert (workdir / "sweep-cache").is_dir()
