import sqlite3


def total_sales(db_path):
    """The sum of every sale's amount (0 when there are none)."""
    with sqlite3.connect(db_path) as db:
        (total,) = db.execute("SELECT COALESCE(SUM(quantity), 0) FROM sales").fetchone()
    return total
