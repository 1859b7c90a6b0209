def calc_tot(lines):
    """The total of (quantity, unit price) lines."""
    return sum(q * p for q, p in lines)
