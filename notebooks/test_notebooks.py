"""Executes every notebook against a real quickstart run, so a notebook that no longer matches
the table contract fails the test suite.

The quickstart pipeline is run once (by the schedlab binary named in SCHEDLAB_BIN) into a
temporary data directory; each notebook then runs top to bottom with SCHEDLAB_DATA pointing there.
"""

import os
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    binary = os.environ.get("SCHEDLAB_BIN", str(ROOT / "target" / "debug" / "schedlab"))
    subprocess.run(
        [binary, "run", str(ROOT / "pipelines" / "quickstart.yaml"), "--data", str(data)],
        check=True,
        cwd=ROOT,
    )
    return data


@pytest.mark.parametrize("notebook", sorted(HERE.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom(notebook, data_dir, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_DATA", str(data_dir))
    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
