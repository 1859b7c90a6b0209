def count_greetings(path):
    """The number of non-empty lines of the greetings file."""
    with open(path) as handle:
        return sum(1 for line in handle if line.strip())
