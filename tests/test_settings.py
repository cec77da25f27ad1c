"""The GRADE_* environment is read once into a frozen Settings value, which is what the grader then obeys."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from grader.errors import CourseError
from grader.running.limits import Limits
from grader.running.sandbox import sandbox_prefix, sandbox_request
from grader.settings import Settings


def test_an_empty_environment_gives_the_documented_defaults():
    settings = Settings.from_environment({"HOME": "/home/learner"})
    assert settings.landlock and not settings.require_sandbox
    assert settings.sandbox_words() == [] and settings.course_root is None
    assert settings.cache_root == Path("/home/learner/.cache/mp-grader")
    with_xdg = Settings.from_environment({"HOME": "/home/learner", "XDG_CACHE_HOME": "/var/cache/me"})
    assert with_xdg.cache_root == Path("/var/cache/me/mp-grader")


@pytest.mark.parametrize(("value", "landlock"), [("off", False), ("OFF", False), ("on", True), ("", True)])
def test_only_grade_landlock_off_switches_landlock_off(value, landlock):
    assert Settings.from_environment({"GRADE_LANDLOCK": value}).landlock is landlock


@pytest.mark.parametrize(("value", "required"), [("1", True), ("yes", False), ("0", False)])
def test_only_grade_require_sandbox_1_requires_a_sandbox(value, required):
    assert Settings.from_environment({"GRADE_REQUIRE_SANDBOX": value}).require_sandbox is required


def test_the_cache_folder_is_grade_cache_dir_or_off():
    assert Settings.from_environment({"GRADE_CACHE_DIR": "/tmp/grade-cache"}).cache_root == Path(
        "/tmp/grade-cache"
    )
    assert Settings.from_environment({"GRADE_CACHE_DIR": "Off"}).cache_root is None
    assert Settings().cache_root is None, "a Settings built in code keeps nothing on disk"


def test_grade_sandbox_is_split_like_a_shell_line_and_a_bad_one_is_the_instructors_error():
    settings = Settings.from_environment({"GRADE_SANDBOX": "bwrap --tmpfs '{solutions}' --"})
    assert settings.sandbox_words() == ["bwrap", "--tmpfs", "{solutions}", "--"]
    broken = Settings.from_environment({"GRADE_SANDBOX": "bwrap 'unclosed"})  # read without complaint
    with pytest.raises(CourseError, match="GRADE_SANDBOX is not a valid command line"):
        broken.sandbox_words()


def test_settings_are_frozen_and_an_option_overrides_a_copy():
    settings = Settings.from_environment({})
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.landlock = False  # type: ignore[misc]
    required = dataclasses.replace(settings, require_sandbox=True)
    assert required.require_sandbox and not settings.require_sandbox


def test_a_grader_obeys_the_settings_it_was_given_not_the_environment_later(toy_course, monkeypatch):
    problem = toy_course.problem("toy")
    limits = Limits(settings=Settings.from_environment({}))
    monkeypatch.setenv("GRADE_LANDLOCK", "off")
    monkeypatch.setenv("GRADE_SANDBOX", "bwrap --")
    assert sandbox_request(limits, [problem], trusted=False, prefix=[])["forbidden"] is not None
    assert sandbox_prefix(limits.settings, problem) == []
    switched_off = Limits(settings=Settings.from_environment())
    assert sandbox_request(switched_off, [problem], trusted=False, prefix=[])["forbidden"] is None
    assert sandbox_prefix(switched_off.settings, problem) == ["bwrap", "--"]
