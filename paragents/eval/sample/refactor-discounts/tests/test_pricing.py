import inspect
import unittest

import pricing


class PricingTest(unittest.TestCase):
    def test_same_results(self):
        self.assertEqual(pricing.member_price(19.99), 18.99)
        self.assertEqual(pricing.sale_price(19.99), 15.99)
        self.assertEqual(pricing.staff_price(10.05), 7.04)
        self.assertEqual(pricing.member_price(0.1), 0.1)

    def test_apply_rate(self):
        self.assertEqual(pricing.apply_rate(100, 0.25), 75.0)
        self.assertEqual(pricing.apply_rate(2.675, 0), 2.68)

    def test_one_copy_of_the_rounding(self):
        for name in ("member_price", "sale_price", "staff_price"):
            source = inspect.getsource(getattr(pricing, name))
            self.assertIn("apply_rate(", source, name)
            self.assertNotIn("quantize", source, name)
