"""Running a child from the grader's side: its jobs, limits and sandbox, the process, the protocol it
speaks."""
