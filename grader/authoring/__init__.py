"""For problem authors: `grade check` (is a problem sound, its margins per family), `grade new`, `grade
docs`."""
