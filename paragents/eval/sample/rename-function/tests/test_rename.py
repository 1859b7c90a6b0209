import unittest
from pathlib import Path

import invoice
import orders


class RenameTest(unittest.TestCase):
    def test_new_name(self):
        self.assertEqual(orders.calculate_total([(2, 1.5), (1, 4)]), 7)
        self.assertEqual(invoice.invoice_text([(3, 2)]), "Total: 6.00")

    def test_old_name_gone(self):
        for path in Path(".").rglob("*.py"):
            self.assertNotIn("calc_tot", path.read_text(), str(path))
