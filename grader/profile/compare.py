"""Compare a learner's precision profile with the reference's (both made by grader/profile/profiler.py), by
role and dtype signature rather than by equation order, and say what differs in the learner's terms.

Two programs that compute the same thing in the same dtypes have the same signatures in every role, however
they are written (`nn.Dense(dtype=...)` or a hand-written matmul, a jitted scan or a Python loop), so only
which signatures appear counts, never how often or in what order. Only the reference's summary is read: a
signature only the reference has is told with where the learner's operations of that role run (a gradient
matmul in the forward's dtypes has no signature of its own), never with the reference's lines.
"""

from __future__ import annotations

import itertools
from typing import Any

from grader.profile.profiler import ROLES, signature
from grader.profile.walk import dtype_width
from grader.results import PrecisionProfile

_NOUNS = {  # a role as the sentences name it, one and many
    "matmul": ("a matmul", "matmuls"),
    "convolution": ("a convolution", "convolutions"),
    "reduction": ("a reduction", "reductions"),
    "accumulation": ("a 16-bit running sum", "16-bit running sums"),
    "exp/log": ("an exp or log", "exp and log"),
    "scaling": ("a multiplication or division by a scalar", "scalings"),
    "cast": ("a cast", "casts"),
    "mixed": ("a mixed-dtype operation", "mixed-dtype operations"),
}
_WORDS = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min", "reduce_prod": "product"}
_WORDS |= {"mul": "multiplication by a scalar", "div": "division by a scalar", "add": "running sum"}
# Reductions of the backward pass are jax's transposes of the forward's broadcasts: they follow from what
# the forward pass did (reported there), and a correct variant may well have float32 ones the reference lacks.
_NOT_COMPARED = {"backward reduction"}


def _where(entry: dict[str, Any]) -> str:
    if entry.get("line") is None:
        return "in a library call"
    return f"at {entry['file']}:{entry['line']}"


def _first_of_each(entries: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """For each (role, signature), its first entry, preferring one on a line of the submission."""
    first: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in entries:
        key = (entry["role"], signature(entry))
        if key not in first or (first[key].get("line") is None and entry.get("line") is not None):
            first[key] = entry
    return first


def _learner_only(entry: dict[str, Any], reference: dict[str, dict[str, int]]) -> str:
    role, sig, where = entry["role"], signature(entry), _where(entry)
    if "via" in entry:
        rounded = f"rounds {entry['result']} through {entry['via']} ({sig})"
        return f"your code {where} {rounded}; the reference never does"
    if role == "cast":
        converted = f"converts {entry['operands'][0]} to {entry['result']}"
        return f"your cast {where} {converted}; the reference never does"
    if role == "mixed":
        source, target = entry["operands"][0], entry["result"]
        return (
            f"your code {where} mixes {source} with {target} in one operation ({source} promoted to "
            f"{target}); the reference never mixes them"
        )
    many = _NOUNS[role][1]
    theirs = list(reference.get(role, {}))
    elsewhere = (
        f"the reference's {many} run in {' or '.join(theirs[:2])}"
        if theirs
        else f"the reference has no {many}"
    )
    what = _WORDS.get(entry["primitive"], entry["primitive"]) if role != "matmul" else "matmul"
    return f"your {what} {where} ran in {entry['result']} ({sig}); {elsewhere}"


def _places(entries: list[dict[str, Any]], role: str) -> str:
    """Where the learner's operations of a role run, by signature: "X at stub.py:38, 43; Y in a library
    call" (up to two signatures and three lines each)."""
    lines: dict[str, list[int | None]] = {}
    for entry in entries:
        if entry["role"] == role:
            lines.setdefault(signature(entry), [])
            if entry.get("line") not in lines[signature(entry)]:
                lines[signature(entry)].append(entry.get("line"))
    name = next((entry["file"] for entry in entries), "")
    places = []
    for sig, numbers in list(lines.items())[:2]:
        known = [str(n) for n in numbers if n is not None][:3]
        places.append(f"{sig} at {name}:{', '.join(known)}" if known else f"{sig} in a library call")
    return "; ".join(places)


def _reference_only(role: str, sig: str, entries: list[dict[str, Any]]) -> str:
    """The reference's signature the learner lacks, and where the learner's operations of that role run
    (the place to look when, say, a gradient's matmul runs in the forward's dtypes)."""
    if role == "cast" and sig.count(" -> ") == 1:
        source, target = sig.split(" -> ")
        line = f"the reference converts {source} to {target}; your code never does"
    else:
        line = f"the reference has {_NOUNS[role][0]} in {sig}; yours has none"
    places = _places(entries, role)
    return f"{line} (yours: {places})" if places else line


def _widths(sig: str) -> tuple[int, int]:
    """The narrowest operand's and the result's widths in bits: "bfloat16 x float32 -> float32" -> 16, 32."""
    operands, result = sig.rsplit(" -> ", 1)
    return min(dtype_width(d) for d in operands.split(" -> ")[0].split(" x ")), dtype_width(result)


def _wider_sum(role: str, sig: str, reference: dict[str, dict[str, int]]) -> bool:
    """Whether `sig` is a reduction that reads and keeps at least as many bits as every reduction of the
    reference (a mean taken in float32 over bfloat16 squares): more precise, never the mistake, so never
    reported. One that reads fewer (the amax of a float8 value) is."""
    theirs = [_widths(s) for s in reference.get(role, {})]
    if role != "reduction" or not theirs:
        return False
    reads, keeps = _widths(sig)
    return reads >= min(r for r, _ in theirs) and keeps >= max(k for _, k in theirs)


def _covered(role: str, sig: str, learner: dict[str, dict[str, int]]) -> bool:
    """Whether the learner's reductions include one at least as wide as the reference's `sig`."""
    return any(_wider_sum(role, mine, {role: {sig: 1}}) for mine in learner.get(role, {}))


def compare_profiles(learner: dict[str, Any], reference: dict[str, Any], limit: int = 4) -> list[str]:
    """The first differences between the two profiles, learner-only signatures first, at most `limit`
    lines; [] when every role has the same signatures. A profile that could not be made gives one line,
    "no profile: <reason>"."""
    if "error" in learner:
        return [f"no profile: {learner['error']}"]
    if "error" in reference:
        return [f"no profile of the reference: {reference['error']}"]
    theirs = {role: sigs for role, sigs in reference["summary"].items() if role not in _NOT_COMPARED}
    ours = learner["summary"]
    first = _first_of_each(learner["entries"])
    only_ours = [
        (role, sig)
        for role in ROLES
        if role not in _NOT_COMPARED
        for sig in ours.get(role, {})
        if sig not in theirs.get(role, {}) and not _wider_sum(role, sig, theirs)
    ]
    # a learner-only matmul (say) already names the reference's first two signatures of its role
    named = {
        (role, sig)
        for role, _ in only_ours
        if role not in ("cast", "mixed")
        for sig in list(theirs.get(role, {}))[:2]
    }
    lines = [_learner_only(first[key], theirs) for key in only_ours]
    lines += [
        _reference_only(role, sig, learner["entries"])
        for role, signatures in theirs.items()
        for sig in signatures
        if sig not in ours.get(role, {}) and (role, sig) not in named and not _covered(role, sig, ours)
    ]
    return lines[:limit]


def _pairs(profile: dict[str, Any]) -> set[tuple[str, str]]:
    summary = profile.get("summary", {})
    return {(role, sig) for role, sigs in summary.items() if role not in _NOT_COMPARED for sig in sigs}


def profile_made(*profiles: dict[str, Any] | None) -> bool:
    """Whether every one of `profiles` was made (not None, not {"error": why})."""
    return all(bool(profile) and "error" not in profile and "summary" in profile for profile in profiles)


def profile_distance(one: dict[str, Any], other: dict[str, Any]) -> int | None:
    """How many (role, signature) pairs one profile has and the other lacks, both ways; None when either
    could not be made. 0: the two ran the same dtypes in every role."""
    if not profile_made(one, other):
        return None
    return len(_pairs(one) ^ _pairs(other))


def dtype_departures(learner: dict[str, Any], reference: dict[str, Any]) -> list[str]:
    """Where a learner's dtypes depart from the reference's, however the code is written (no line, no order):
    each (role, signature) pair one profile has and the other lacks, as "role: signature", sorted; [] when
    either could not be made."""
    if not profile_made(learner, reference):
        return []
    return sorted(f"{role}: {sig}" for role, sig in _pairs(learner) ^ _pairs(reference))


def runs_the_mistakes_dtypes(learner: dict | None, pitfall: dict | None, reference: dict | None) -> bool:
    """Whether the learner's code runs the dtypes of a pitfall's file wherever that file's differ from the
    reference's (it has each signature the file adds, and lacks each one the file lacks); True when a
    profile is missing, since then only the numbers can say."""
    if not profile_made(learner, pitfall, reference):
        return True
    ours, theirs = _conversions(learner), _conversions(pitfall)
    return all((pair in ours) == (pair in theirs) for pair in theirs ^ _conversions(reference))


def _conversions(profile: dict[str, Any]) -> set[tuple[str, str]]:
    """A profile's pairs with every conversion spelt one way, whatever wrote it: a round trip
    ("float32 -> bfloat16 -> float32") as its two casts, and a promotion by a mixed operation ("bfloat16 ->
    float32") as the cast it is. `ema.astype(float32) * d` and `ema * d` with an fp32 `d` run the same
    dtypes; only the spelling differs."""
    pairs = set()
    for role, sig in _pairs(profile):
        steps = sig.split(" -> ")
        if role in ("cast", "mixed") and " x " not in sig:
            pairs |= {("cast", f"{a} -> {b}") for a, b in itertools.pairwise(steps)}
        else:
            pairs.add((role, sig))
    return pairs


def precision_profile(case: int, learner: dict[str, Any], reference: dict[str, Any]) -> PrecisionProfile:
    """The report's profile of an answer traced on practice case `case`: the differences from the
    reference, the learner's entries and summary, and of the reference its summary only (no line of the
    solution reaches the learner)."""
    differences = compare_profiles(learner, reference)
    error = "error" in learner or "error" in reference  # then the one line says why there is no profile
    return PrecisionProfile(
        case=case,
        differences=() if error else tuple(differences),
        error=differences[0] if error else "",
        learner={key: learner[key] for key in ("entries", "summary", "seconds") if key in learner},
        reference={"summary": reference.get("summary", {})},
    )
