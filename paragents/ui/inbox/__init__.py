"""The "needs you" inbox (f2): its screen and rows (``screen``), the asks other processes wait on
(``remote``), and the bell of a background session that starts waiting (``bell``)."""
