"""Where expected outputs come from: the course's own files run in a trusted child, and the stores that keep
them."""
