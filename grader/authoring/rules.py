"""The rules a statement states, held to the cases: each rule of `problem.toml` (`[rules.<name>]`) names the
course files that break it, which must fail on every secret, or says why it is not graded and names the
files that break it and pass, which must pass on every secret. `grade check` judges that from the findings
of those files; `grade docs` writes the statement's list of rules from the manifest (authoring/docs.py);
and a statement may not admit a verdict that depends on the secret (two learners with one file would get
different marks)."""

from __future__ import annotations

import re

from grader.authoring.check_files import Finding, Verdict
from grader.course.problems import Problem, Rule

BREAKING_KINDS = ("pitfall", "mistake")  # files that break a rule and must fail everywhere
ACCEPTED_KINDS = ("variant",)  # files that break a rule the cases cannot tell, and must pass everywhere

# Sentences by which a statement admits that a mistake is caught on some secrets and not on others.
SECRET_DEPENDENT = re.compile(
    r"now and then|not reliably|not always caught|sometimes (?:caught|fails|passes)|"
    r"(?:caught|fails|passes) on (?:some|most|a few) (?:secrets|cases)|depends? on the secret|"
    r"passes on most cases",
    re.IGNORECASE,
)


def secret_dependent_sentences(text: str) -> list[str]:
    """The sentences of `text` that admit a verdict depending on the secret, as they read."""
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    return [sentence for sentence in sentences if SECRET_DEPENDENT.search(sentence)]


def manifest_findings(problem: Problem, labels: set[str]) -> list[Finding]:
    """What can be judged before anything runs: every rule is held one way or the other, by files that
    exist, of the right kind (`labels`: the problem's files as `table_files` names them), and the statement
    admits no verdict that depends on the secret."""
    statement = problem.statement_path
    text = statement.read_text(encoding="utf-8") if statement.is_file() else ""
    admits = "admits a verdict that depends on the secret"
    found = [
        Finding("rule", "README.md", Verdict.FAIL, f"{admits}: {sentence!r}")
        for sentence in secret_dependent_sentences(text)
    ]
    return found + _label_findings(problem, labels)


def _label_findings(problem: Problem, labels: set[str]) -> list[Finding]:
    if not problem.rules:
        detail = "lists no [rules.<name>]: each rule the Task section states, and the file that breaks it"
        return [Finding("rule", "problem.toml", Verdict.INCOMPLETE, detail)]
    found = []
    for rule in problem.rules:
        wrong = _wrong_labels(rule, labels)
        if bool(rule.broken_by) == bool(rule.not_graded):
            detail = "needs either broken_by (files that fail) or not_graded (the reason) with accepted files"
            found.append(Finding("rule", rule.name, Verdict.FAIL, detail))
        elif rule.not_graded and not rule.accepted:
            detail = "not graded, but no accepted file shows that a file breaking it passes"
            found.append(Finding("rule", rule.name, Verdict.FAIL, detail))
        elif wrong:
            found.append(Finding("rule", rule.name, Verdict.FAIL, "; ".join(wrong)))
    return found


def _wrong_labels(rule: Rule, labels: set[str]) -> list[str]:
    wrong = []
    for label, kinds in [(label, BREAKING_KINDS) for label in rule.broken_by] + [
        (label, ACCEPTED_KINDS) for label in rule.accepted
    ]:
        kind = label.split(":", 1)[0]
        if kind not in kinds:
            wrong.append(f"{label}: must be {' or '.join(f'{k}:<name>' for k in kinds)}")
        elif label not in labels:
            wrong.append(f"{label}: no such file")
    return wrong


def rule_findings(problem: Problem, findings: list[Finding]) -> list[Finding]:
    """Each rule judged from its files' findings (once they have run): every file that breaks it fails on
    every secret, or every accepted one passes on every secret. The ratio is the weakest file's."""
    by_label = {f"{f.kind}:{f.name}": f for f in findings if f.kind in BREAKING_KINDS + ACCEPTED_KINDS}
    refused = {f.name for f in findings if f.kind == "rule"}  # by `manifest_findings`, before anything ran
    judged = []
    for rule in problem.rules:
        labels = rule.broken_by or rule.accepted
        if rule.name in refused or not labels:
            continue
        files = [by_label.get(label) for label in labels]
        if any(file is None for file in files):
            continue  # not run: its file's own finding says why
        unsound = [f"{f.kind}:{f.name} {f.detail}" for f in files if f.verdict is not Verdict.OK]
        unseen = [f"{f.kind}:{f.name}" for f in files if f.ratio is None and f.kind == "pitfall"]
        if unsound or unseen:
            detail = "; ".join(unsound + [f"{label}: no family shows it" for label in unseen])
            judged.append(Finding("rule", rule.name, Verdict.FAIL, detail))
            continue
        ratios = [f.ratio for f in files if f.ratio is not None]
        plural = len(labels) > 1
        if rule.broken_by:
            detail = f"step {rule.step}: {', '.join(labels)} {'fail' if plural else 'fails'} on every secret"
            judged.append(Finding("rule", rule.name, Verdict.OK, detail, min(ratios) if ratios else None))
        else:
            said = f"{', '.join(labels)} {'pass' if plural else 'passes'} on every secret"
            detail = f"step {rule.step}: not graded, said in the statement; {said}"
            judged.append(Finding("rule", rule.name, Verdict.OK, detail, max(ratios) if ratios else None))
    return judged
