"""Fan-out: one task to several sessions at once (best-of-N, split, specialist review)."""
