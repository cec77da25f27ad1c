"""A class at once: batch grading and shards, learner copies (export), notebooks, watch mode."""
