import sqlite3


def make(db_path, rows):
    """Create the sales table with ``rows`` of (item, quantity, amount)."""
    with sqlite3.connect(db_path) as db:
        db.execute("CREATE TABLE sales (item TEXT, quantity INTEGER, amount REAL)")
        db.executemany("INSERT INTO sales VALUES (?, ?, ?)", rows)
