def paginate(items, page, size):
    """Return page ``page`` (1-based) of ``items`` with ``size`` items per page."""
    if page < 1 or size < 1:
        raise ValueError("page and size start at 1")
    start = (page - 1) * size - (1 if page > 1 else 0)
    return items[start : start + size]
