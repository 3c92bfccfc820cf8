"""notebooks/postmortem.ipynb runs from top to bottom on the seed incident (its cells assert what
they show), and is stored without outputs, so that a diff of it is a diff of its code."""

from __future__ import annotations

import json

import pytest

from tests.helpers import ROOT

NOTEBOOK = ROOT / "notebooks" / "postmortem.ipynb"


def test_stored_without_outputs() -> None:
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [] and cell.get("execution_count") is None, "clear the outputs before committing"


def test_notebook_executes() -> None:
    nbclient = pytest.importorskip("nbclient", reason="the dev extra (make test) installs nbclient and ipykernel")
    import nbformat

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    table = next(output for output in outputs if output.output_type == "execute_result"
                 and "text/html" in output.data and "cuda.nvcc-not-found" in output.data["text/html"])
    assert "cuda.header-missing" in table.data["text/html"]
