"""The `grade` command: parse a subcommand and its options, run it, turn errors into exit statuses."""
