"""Real-time admission (issue 29): ``flashlab admit`` and ``flashlab.admit`` give the paper's
numbers for Table III on Table IV and refuse it, naming the paper's inconsistency; a run under
``run.admission = "enforce"`` refuses what ``admit`` refuses with the same message."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import flashlab
from flashlab import Admission

TABLE_III = "4xw12p@60ms+4xr3p@15ms"
SMALL = {"geometry.blocks_per_plane": 64, "run.precondition_max_passes": 1}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flashlab", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_table_iii_is_refused_with_the_papers_numbers() -> None:
    a = flashlab.admit("part-ftl", TABLE_III)
    assert isinstance(a, Admission)
    assert (a.scheme, a.admitted) == ("PaRT-FTL", False)
    eq6, eq7 = a.test("eq. 6"), a.test("eq. 7")
    # eq. 6: 12 pages x 1.23 ms / 15 ms + 1.23 ms / 15 ms.
    assert eq6.total == pytest.approx(13 * 1.23 / 15)
    assert [t.name for t in eq6.terms] == ["read", "blocking"]
    assert eq6.terms[1].value == pytest.approx(1.23 / 15)
    assert eq7.total == pytest.approx(1.254, abs=1e-3)
    assert not eq6.passes and not eq7.passes
    assert a.bound("eq. 8").value == pytest.approx(1.23e6)
    assert a.bound("eq. 10").value == pytest.approx(76.22, abs=0.01)
    assert a.refusal is not None and a.refusal.startswith("read set utilisation 1.07 > 1 (eq. 6)")
    assert "passes PaRT-FTL's admission control" in a.notes[0]
    assert a.device["read_ns"] == pytest.approx(1.23e6)
    assert "Table IV" in a.device_source
    assert len(a.tasks) == 8


def test_wao_gc_bounds_are_eqs_15_and_16() -> None:
    a = flashlab.admit("wao-gc", TABLE_III)
    assert a.bound("eq. 15").value == pytest.approx(15.49, abs=0.01)
    assert a.bound("eq. 16").value == pytest.approx(13.44, abs=0.01)
    test = a.test("section VI.A")
    assert test.requests[4].response_ns == pytest.approx(3 * 1.23e6 + 4 * 6.2e6)
    with pytest.raises(KeyError, match="eq. 8"):
        a.bound("eq. 8")


def test_settings_reach_the_analysis() -> None:
    a = flashlab.admit("part-ftl", TABLE_III, set={"ftl.data_ratio": 0.518})
    assert a.test("eq. 7").total == pytest.approx(0.919, abs=1e-3)
    assert not a.admitted, "eq. 6 does not depend on lambda"
    modelled = flashlab.admit("part-ftl", "4xr3p@20ms", device="cosmos")
    assert "timing model" in modelled.device_source
    assert modelled.device["read_ns"] == pytest.approx(0.875e6)
    assert modelled.admitted


def test_bad_arguments_name_themselves() -> None:
    with pytest.raises(flashlab.ConfigError, match="ftl.name"):
        flashlab.admit("pagemap", TABLE_III)
    with pytest.raises(flashlab.ConfigError):
        flashlab.admit("part-ftl", "4xq12p@60ms")
    with pytest.raises(TypeError, match="tasks"):
        flashlab.admit("part-ftl", 12)  # type: ignore[arg-type]


def test_the_command_prints_every_test_and_exits_1_when_refused() -> None:
    result = cli("admit", "--ftl", "part-ftl", "--tasks", TABLE_III)
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert "PaRT-FTL admission: REFUSED" in out
    assert "read set (eq. 6): read 0.984 + blocking 0.082 = 1.066 > 1  FAILS" in out
    assert "write set (eq. 7): write 0.266 + encoding 0.089 + GC 0.836" in out
    assert "eq. 8 worst page-read latency (a rebuild): 1.230 ms" in out
    assert "section VI.B says this set (Table III)" in out
    admitted = cli("admit", "--ftl", "part-ftl", "--tasks", "4xw12p@100ms+4xr3p@20ms")
    assert admitted.returncode == 0 and "ADMITTED" in admitted.stdout
    unknown = cli("admit", "--ftl", "nosuch", "--tasks", TABLE_III)
    assert unknown.returncode == 2 and "unknown FTL `nosuch`" in unknown.stderr
    no_test = cli("admit", "--ftl", "pagemap", "--tasks", TABLE_III)
    assert no_test.returncode == 2 and "ftl.name" in no_test.stderr


def test_the_command_json_is_the_python_result() -> None:
    result = cli("admit", "--ftl", "rtgc", "--tasks", TABLE_III, "--json")
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    assert Admission.from_json(doc) == flashlab.admit("rtgc", TABLE_III)


@pytest.mark.parametrize("ftl", ["part-ftl", "wao-gc", "rtgc"])
def test_enforce_refuses_with_the_message_admit_gives(ftl: str) -> None:
    refusal = flashlab.admit(ftl, TABLE_III).refusal
    assert refusal
    with pytest.raises(flashlab.ConfigError) as caught:
        flashlab.run(
            "cosmos-table-iv",
            ftl=ftl,
            workload=f"periodic:tasks={TABLE_III},duration=100ms",
            set={**SMALL, "run.admission": "enforce"},
        )
    assert refusal in str(caught.value)


def test_an_unwritable_json_is_refused_before_anything_is_printed(tmp_path: Path) -> None:
    result = cli(
        "admit",
        "--ftl",
        "part-ftl",
        "--tasks",
        TABLE_III,
        "--json",
        str(tmp_path / "no" / "x.json"),
    )
    assert result.returncode == 74, result.stderr
    assert result.stdout == ""
    assert "does not exist" in result.stderr
