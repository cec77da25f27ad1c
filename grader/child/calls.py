"""In a grading child (and, for notebooks, in the learner's own process): import a submission's function from
its copy, import a problem's harness, call a case and describe what came of it. Standard library, numpy
and jax only, loaded by path (grader/child/main.py), like its siblings, which it loads the same way."""

from __future__ import annotations

import difflib
import importlib.util
import inspect
import linecache
import shutil
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any


def sibling(name: str, folder: str = "child") -> ModuleType:
    """A module of the grader's `folder` (this one, or `profile`), loaded by path: the child cannot import
    the grader package."""
    path = Path(__file__).parent.parent / folder / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_grader_{folder}_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_describe = sibling("describe")
encode_returned, describe_exception = _describe.encode_returned, _describe.describe_exception


def _load_failure(kind: str, message: str, detail: str = "") -> dict[str, Any]:
    return {"ok": False, "kind": kind, "message": _describe.cap(message), "detail": _describe.cap(detail)}


def _import(copy: Path, shown: str, module_name: str) -> ModuleType:
    """Runs the submission's copy as a module whose code carries the learner's own path, `shown`: that is the
    file tracebacks, the report and the precision profile name, and whose lines they quote."""
    source = copy.read_bytes()
    lines = source.decode("utf-8", "replace").splitlines(keepends=True)
    linecache.cache[shown] = (len(source), None, lines, shown)  # the original may be out of reach
    module = ModuleType(module_name)
    module.__file__ = str(copy)
    sys.modules[module_name] = module
    exec(compile(source, shown, "exec", dont_inherit=True), module.__dict__)
    return module


def load_function(path: Path, function: str, parameters: list[str], module_name: str, shown: str = ""):
    """Imports the submission at `path` (its copy; `shown`: the learner's path, which its code carries) and
    returns (function, None) or (None, failure description)."""
    signature = f"{function}({', '.join(parameters)})"
    shown = shown or str(path)
    try:
        module = _import(path, shown, module_name)
    except SyntaxError as exc:
        where = f"{Path(exc.filename or path).name}, line {exc.lineno}"
        text = (exc.text or "").rstrip("\n")
        caret = " " * max((exc.offset or 1) - 1, 0) + "^" if text else ""
        detail = f"    {text}\n    {caret}" if text else ""
        return None, _load_failure("syntax", f"SyntaxError: {exc.msg} ({where})", detail)
    except BaseException as exc:
        raised = describe_exception(exc, Path(shown))
        message = (
            raised["message"] if isinstance(exc, SystemExit) else f"{raised['type']}: {raised['message']}"
        )
        return None, _load_failure("import", f"{message} while importing {path.name}", raised["traceback"])
    candidate = getattr(module, function, None)
    if candidate is None:
        defined = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]
        close = difflib.get_close_matches(function, defined, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return None, _load_failure(
            "missing_function", f"{path.name} defines no function {function!r} (expected {signature}){hint}"
        )
    if not callable(candidate):
        return None, _load_failure("missing_function", f"{function} in {path.name} is not a function")
    try:
        inspect.signature(candidate).bind(*parameters)
    except TypeError:
        return None, _load_failure(
            "signature", f"{function}{inspect.signature(candidate)} cannot be called as {signature}"
        )
    except ValueError:
        pass  # builtins without a signature: let the call decide
    return candidate, None


def load_harness(path: str | None) -> ModuleType | None:
    """Imports a problem's harness (course code, loaded before any submission); None when it has none."""
    if not path:
        return None
    spec = importlib.util.spec_from_file_location("_grader_harness", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the harness {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def call_case(
    fn,
    inputs: dict[str, Any],
    submission: Path,
    harness: ModuleType | None = None,
    folder: Path | None = None,
) -> dict[str, Any]:
    """Calls the learner's function on fresh copies of one case's inputs and describes the outcome.

    With a harness, the harness makes the calls, given `folder` (fresh and empty, removed afterwards).
    """
    import numpy as np

    args = {name: value.copy() if isinstance(value, np.ndarray) else value for name, value in inputs.items()}
    course_files = (harness.__file__,) if harness is not None else ()
    start = time.perf_counter()
    try:
        if harness is None:
            value = fn(*args.values())
        else:
            assert folder is not None, "a harness needs a folder per case"
            folder.mkdir(parents=True)
            value = harness.run_case(fn, args, folder)
        outcome = {"returned": encode_returned(value)}
    except BaseException as exc:
        outcome = {
            "raised": _describe.rejection(exc, harness) or describe_exception(exc, submission, course_files)
        }
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)  # nothing a learner writes outlives its case
    outcome["seconds"] = time.perf_counter() - start
    return outcome
