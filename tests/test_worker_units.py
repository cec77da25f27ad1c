"""The README's test command runs on two pytest-xdist workers; tests/conftest.py says which modules must
share one. These tests keep that list true as modules are renamed or added."""

from __future__ import annotations

from pathlib import Path

from conftest import WORKER_UNITS, worker_unit

HERE = Path(__file__).parent
# what a module reads to find what a test on another worker may have made: any process on the machine (by
# tests/leftover_processes.py or a scan of its own), or the machine's SysV objects and keys
MACHINE_WIDE = (
    "live_processes_named",
    'Path("/proc").glob',
    'os.listdir("/proc")',
    "/proc/sysvipc",
    "/proc/keys",
)


def test_every_module_named_in_a_unit_exists():
    missing = sorted(name for name in WORKER_UNITS if not (HERE / name).is_file())
    assert not missing, f"tests/conftest.py's WORKER_UNITS names modules that are gone: {missing}"


def test_every_module_that_looks_machine_wide_shares_the_worker_of_the_files_it_looks_for():
    scanning = sorted(
        path.name
        for path in HERE.glob("test_*.py")
        if path.name != Path(__file__).name and any(probe in path.read_text() for probe in MACHINE_WIDE)
    )
    assert scanning, "no module looks machine-wide: MACHINE_WIDE no longer says how they look"
    # test_hostile.py grades every file of tests/submissions/, so it makes what the others look for
    units = {name: worker_unit(f"tests/{name}::test_x[a]") for name in [*scanning, "test_hostile.py"]}
    assert set(units.values()) == {"processes-left-behind"}, units


def test_other_modules_run_whole_and_apart():
    assert worker_unit("tests/test_settings.py::test_a[b]") == "tests/test_settings.py"
    assert worker_unit("tests/test_docs.py::test_c") != worker_unit("tests/test_settings.py::test_a")
    assert worker_unit("tests/test_problems.py::t") == worker_unit("tests/test_export.py::t")
