"""What every report says of a failed answer's mistake, in one wording: the named pitfall (or the tied ones,
as equals), the others that give the same numbers, or, when none is named, the nearest miss."""

from __future__ import annotations

from grader.results import MatchedPitfall, ProblemResult


def _numbers(cases: tuple[int, ...]) -> str:
    words = [str(number) for number in cases]
    listed = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
    return f"case{'s' if len(words) > 1 else ''} {listed}"


def naming_paragraphs(result: ProblemResult) -> list[tuple[str, MatchedPitfall | None]]:
    """The paragraphs about the mistake: each a sentence, and the pitfall whose explanation follows it."""
    named = [result.pitfall, *result.also_matches] if result.pitfall else []
    if named and result.pitfall_tied:
        head = (
            "Your outputs are those of each of these named pitfalls, equally: the numbers and the dtypes "
            "your code ran do not tell them apart."
        )
        return [(head, None), *[(f"'{p.name}': {p.title}.", p) for p in named]]
    if named:
        lead, *others = named
        return [
            (f"Your outputs are those of the named pitfall '{lead.name}': {lead.title}.", lead),
            *[(f"The same numbers come from the named pitfall '{p.name}': {p.title}.", p) for p in others],
        ]
    closest = result.closest
    if closest is None:
        return []
    head = (
        f"No known mistake gives these outputs. The closest, the named pitfall '{closest.name}' "
        f"({closest.title}), gives your numbers on practice {_numbers(closest.agrees)} but not on "
        f"{_numbers(closest.differs)}."
    )
    return [(head, None)]
