"""The `grade` command (`grade`, `python -m grader`): main.py dispatches a subcommand; grade.py grades
(`grade ID... | --all`), course.py the learner's and author's subcommands (list, hint, watch, export, prepare,
check, new, docs), batch.py `grade batch` and `merge`, notebooks.py `grade notebooks`, options.py what they
share. The top of the engine: it may import every part, and no part imports it."""
